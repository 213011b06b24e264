// The driver's data rearrangement for the application graphs (section 6.1 of
// Kühbacher et al.: "the driver tile rearranges the data ... to transfer
// contiguous portions of memory"). Two special actors on row-major matrices
// of fixed-size elements, both pinned to the driver like rf.split/rf.collect:
//
//   mat.cols  args "cols=C,first=F,elem=E": input 0 is a rows x C matrix of
//             E-byte elements; the output is its columns [F, F + W) as a
//             contiguous rows x W matrix (W from the output size).
//   mat.hcat  args "rows=R,elem=E": inputs are R x w_i matrices; the output
//             is the R x (w_0 + w_1 + ...) matrix that places them side by side.
//
// Splitting rows and concatenating rows need no actor of their own: they are
// rf.split and rf.collect, which the driver does by setting pointers.
#pragma once

#include "redflow/registry.hpp"

namespace redflow::apps {

void register_rearrange_actors(Registry& reg);

}  // namespace redflow::apps
