// REDFLOW_MULTIVERSION: compile a kernel for AVX2 beside the default and pick
// one at load time (target_clones), on x86-64 with GCC or Clang. Used by the
// built-in int32 kernels and the REM stencil.
//
// Not under ThreadSanitizer: the ifunc resolver behind target_clones runs
// during relocation, before the TSan runtime is up, and crashes the program.
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define REDFLOW_NO_MULTIVERSION
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define REDFLOW_NO_MULTIVERSION
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(REDFLOW_NO_MULTIVERSION)
#if __has_attribute(target_clones)
#define REDFLOW_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef REDFLOW_MULTIVERSION
#define REDFLOW_MULTIVERSION
#endif
