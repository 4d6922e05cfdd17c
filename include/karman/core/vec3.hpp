// A 3-component vector templated on the scalar type (double, or std::complex<double>
// for complex-step derivative checks).  2D problems use z = 0.
#pragma once

#include <array>
#include <cmath>
#include <complex>

namespace karman {

template <typename T> struct Vec3 {
  T x[3] = {T(0), T(0), T(0)};

  Vec3() = default;
  Vec3(T a, T b, T c) : x{a, b, c} {}
  template <typename U> static Vec3 from(const std::array<U, 3> &a) {
    return Vec3(T(a[0]), T(a[1]), T(a[2]));
  }

  T &operator[](int i) { return x[i]; }
  const T &operator[](int i) const { return x[i]; }
  Vec3 &operator+=(const Vec3 &o) {
    for (int i = 0; i < 3; ++i) x[i] += o.x[i];
    return *this;
  }
  Vec3 &operator-=(const Vec3 &o) {
    for (int i = 0; i < 3; ++i) x[i] -= o.x[i];
    return *this;
  }
  Vec3 &operator*=(const T &s) {
    for (int i = 0; i < 3; ++i) x[i] *= s;
    return *this;
  }
};

template <typename T> Vec3<T> operator+(Vec3<T> a, const Vec3<T> &b) {
  return a += b;
}
template <typename T> Vec3<T> operator-(Vec3<T> a, const Vec3<T> &b) {
  return a -= b;
}
template <typename T> Vec3<T> operator-(const Vec3<T> &a) {
  return Vec3<T>(-a[0], -a[1], -a[2]);
}
template <typename T> Vec3<T> operator*(const T &s, Vec3<T> a) {
  return a *= s;
}
template <typename T> Vec3<T> operator*(Vec3<T> a, const T &s) {
  return a *= s;
}
template <typename T> T dot(const Vec3<T> &a, const Vec3<T> &b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <typename T> Vec3<T> cross(const Vec3<T> &a, const Vec3<T> &b) {
  return Vec3<T>(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}
/// Euclidean norm; analytic in the components, so complex-step safe (no abs()).
template <typename T> T norm(const Vec3<T> &a) {
  using std::sqrt;
  return sqrt(dot(a, a));
}

/// Real part for output and decisions outside kernels (identity for double).
inline double real_value(double v) {
  return v;
}
inline double real_value(const std::complex<double> &v) {
  return v.real();
}

} // namespace karman
