// doctest's main(); every tests/test_*.cc adds TEST_CASEs to this one binary.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
