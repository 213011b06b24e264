// Attributes: the DOT attributes of a node that redflow does not interpret
// (label, color, replica_of, ...), kept so a graph writes back as it was
// read. Most nodes have none, so the map lives behind a pointer that stays
// null until the first attribute is set: 8 bytes a node instead of a
// std::map's 48, which a 1,000,000-actor graph pays twice per actor.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace redflow {

class Attributes {
 public:
  using Map = std::map<std::string, std::string>;
  using const_iterator = Map::const_iterator;

  Attributes() = default;
  Attributes(Map map) { *this = std::move(map); }  // NOLINT: a map converts
  Attributes(const Attributes& other) : map_(other.map_ ? std::make_unique<Map>(*other.map_) : nullptr) {}
  Attributes(Attributes&&) noexcept = default;
  Attributes& operator=(const Attributes& other) {
    if (this != &other) map_ = other.map_ ? std::make_unique<Map>(*other.map_) : nullptr;
    return *this;
  }
  Attributes& operator=(Attributes&&) noexcept = default;
  Attributes& operator=(Map map) {
    map_ = map.empty() ? nullptr : std::make_unique<Map>(std::move(map));
    return *this;
  }

  // The attributes as a map; an empty one when there are none.
  const Map& map() const { return map_ ? *map_ : none(); }
  bool empty() const { return !map_ || map_->empty(); }
  std::size_t size() const { return map_ ? map_->size() : 0; }
  const_iterator begin() const { return map().begin(); }
  const_iterator end() const { return map().end(); }
  const_iterator find(const std::string& key) const { return map().find(key); }
  std::size_t count(const std::string& key) const { return map().count(key); }
  const std::string& at(const std::string& key) const { return map().at(key); }
  std::string& operator[](const std::string& key) {
    if (!map_) map_ = std::make_unique<Map>();
    return (*map_)[key];
  }

  friend bool operator==(const Attributes& a, const Attributes& b) { return a.map() == b.map(); }

 private:
  static const Map& none() {
    static const Map nothing;
    return nothing;
  }

  std::unique_ptr<Map> map_;
};

}  // namespace redflow
