// Recipe enums and their names: one table per enum, read by the recipe parser (io/recipe.cpp) and by
// whatever prints the value (reports, plans), so no code compares recipe strings.
#pragma once
#include <cstddef>

namespace vgen {

template <typename E>
struct Named {
  E value;
  const char* name;
};

// The name of `v` in `table` ("?" when absent, which a complete table never is).
template <typename E, size_t N>
constexpr const char* name_in(const Named<E> (&table)[N], E v) {
  for (const Named<E>& x : table)
    if (x.value == v) return x.name;
  return "?";
}

}  // namespace vgen
