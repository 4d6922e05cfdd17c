// The keys that define the discrete residual, their hash, and what differs between two key lists
// (see include/karman/config/problem_keys.hpp and CaseConfig::problem_keys()).
#include "karman/config/problem_keys.hpp"

#include "karman/config/case_config.hpp"
#include "karman/core/hash.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <utility>

namespace karman::config {

namespace {

// A copy of `node` with every number in one canonical text (the shortest that reads back to
// the same double), so that 1, 1.0 and 1e0 hash and compare alike.
YAML::Node canonical_numbers(const YAML::Node &node) {
  if (node.IsScalar()) {
    const std::string &text = node.Scalar();
    char *end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x))
      return YAML::Clone(node);
    char buf[32];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof(buf), "%.*g", digits, x);
      if (std::strtod(buf, nullptr) == x) break;
    }
    return YAML::Node(std::string(buf));
  }
  if (node.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto &item : node) out.push_back(canonical_numbers(item));
    return out;
  }
  if (node.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    for (const auto &item : node) out[item.first.Scalar()] = canonical_numbers(item.second);
    return out;
  }
  return YAML::Clone(node);
}

std::string flow_text(const YAML::Node &node) {
  YAML::Emitter e;
  e << YAML::Flow << node;
  return e.c_str();
}

} // namespace

std::string CaseConfig::problem_keys() const {
  // every key that enters R(w) or the geometry on a given mesh (the mesh itself is covered by
  // io::mesh_hash): reference.velocity scales the stabilization and the upwind smoothing
  // (flux_kernels.hpp); the other reference keys only scale the reported coefficients
  std::vector<std::pair<std::string, YAML::Node>> keys;
  for (const auto &sec : schema_->sections()) {
    if (!resolved_[sec.name]) continue; // an optional section the case does not have
    for (const auto &kv : resolved_[sec.name]) {
      const KeySpec *k = sec.find(kv.first.Scalar());
      if (k && k->problem) keys.emplace_back(sec.name + "." + kv.first.Scalar(), kv.second);
    }
  }
  for (const auto &bc : resolved_["boundaries"])
    for (const auto &kv : bc.second) {
      const std::string key = "boundaries." + bc.first.Scalar() + "." + kv.first.Scalar();
      keys.emplace_back(key, kv.second);
      // a time function read from a file: its values enter R, so its contents are hashed
      if (kv.second.IsMap() && kv.second["file"]) {
        std::ifstream in(resolve_path(kv.second["file"].Scalar()), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), {});
        keys.emplace_back(key + ".file_contents",
                          YAML::Node(in.good() || !bytes.empty()
                                         ? hash_hex(hash_bytes(bytes.data(), bytes.size()))
                                         : std::string("unreadable")));
      }
    }
  for (const auto &sec : schema_->sections()) // the sections' variant maps (scalar.boundaries)
    if (!sec.variant_map.empty() && resolved_[sec.name])
      for (const auto &bc : resolved_[sec.name][sec.variant_map])
        for (const auto &kv : bc.second)
          keys.emplace_back(sec.name + "." + sec.variant_map + "." + bc.first.Scalar() + "." +
                                kv.first.Scalar(),
                            kv.second);
  YAML::Emitter e;
  e << YAML::BeginMap;
  for (const auto &[key, value] : keys)
    e << YAML::Key << key << YAML::Value << YAML::Flow << canonical_numbers(value);
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

std::string CaseConfig::problem_hash() const {
  const std::string text = problem_keys();
  return hash_hex(hash_bytes(text.data(), text.size()));
}

std::vector<std::pair<std::string, std::string>> CaseConfig::problem_attributes() const {
  return {{"case_hash", problem_hash()}, {"case_keys", problem_keys()}};
}

std::vector<KeyChange> compare_problem_keys(const std::string &stored, const std::string &current) {
  std::vector<std::pair<std::string, std::string>> a, b;
  for (const auto &[text, out] : {std::pair{&stored, &a}, std::pair{&current, &b}}) {
    YAML::Node root;
    try {
      root = YAML::Load(*text);
    } catch (const YAML::Exception &) {
      return {{"(the stored key list)", "unreadable", "-"}};
    }
    if (!root.IsMap()) return {{"(the stored key list)", "unreadable", "-"}};
    for (const auto &kv : root) out->emplace_back(kv.first.Scalar(), flow_text(kv.second));
  }
  auto find = [](const std::vector<std::pair<std::string, std::string>> &list,
                 const std::string &key) {
    for (const auto &kv : list)
      if (kv.first == key) return kv.second;
    return std::string("(none)");
  };
  std::vector<KeyChange> changes;
  for (const auto &[key, value] : a)
    if (const std::string other = find(b, key); other != value)
      changes.push_back({key, value, other});
  for (const auto &[key, value] : b)
    if (find(a, key) == "(none)") changes.push_back({key, "(none)", value});
  return changes;
}

std::string describe_key_changes(const std::vector<KeyChange> &changes) {
  std::string text;
  for (const auto &c : changes)
    text += (text.empty() ? "" : "; ") + c.key + " = " + c.stored + ", this case has " + c.current;
  return text;
}

std::string describe_problem_change(const std::string &stored, const std::string &current) {
  if (stored.empty())
    return "another case (fluid, reference, solver or boundaries keys; the file was written "
           "before the key list was stored, so the keys that differ are unknown)";
  return describe_key_changes(compare_problem_keys(stored, current));
}

} // namespace karman::config
