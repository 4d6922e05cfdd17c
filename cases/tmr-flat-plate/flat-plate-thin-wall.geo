// The TMR flat plate's mesh family (flat-plate.geo) with first cells 10 times thinner, h_wall =
// 2e-6 at level 0: first cells of aspect ratio 5.4e4 - 6.0e4 (`karman mesh`), the thin cells that
// y+ ~ 1 needs at Re 1e7 and more, for the laminar case (laminar.yaml; issue 42).  The same
// levels and cell counts; the wall-normal lines' progression is steeper.
h_wall = 2e-6;
Include "flat-plate.geo";
