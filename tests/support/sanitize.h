/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sanitize.h - whether this test is built under AddressSanitizer.
 *
 * make test SANITIZE=1 runs the whole suite again with ASan+UBSan, after
 * the normal run has run it in full; a few tests repeat the same work at
 * every one of many points (a capture split at every packet), which is
 * what the normal run proves.  Under ASan they may take a deterministic
 * subset of those points: the memory checks need every code path, not
 * every point.  Each test that does says which subset, beside its loop.
 * GCC says __SANITIZE_ADDRESS__, clang __has_feature(address_sanitizer).
 */
#ifndef CT_TEST_SUPPORT_SANITIZE_H
#define CT_TEST_SUPPORT_SANITIZE_H

#if defined(__SANITIZE_ADDRESS__)
#define TS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_ASAN 1
#endif
#endif
#ifndef TS_ASAN
#define TS_ASAN 0
#endif

#endif /* CT_TEST_SUPPORT_SANITIZE_H */
