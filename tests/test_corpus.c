/* test_corpus.c - replays every file of tests/corpus/ (the fuzzing seeds and
   every crash the fuzzers found) through every reader; see tests/fuzz/fuzz.c.
   Under ./build.sh sanitize this is the CI's corpus replay under ASan/UBSan. */
#define DP_FUZZ_REPLAY
#include "fuzz/fuzz.c"
