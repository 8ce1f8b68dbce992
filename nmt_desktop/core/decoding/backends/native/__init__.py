"""The compiled decoding step's C++ source (decode_step.cpp) and, once built, its library."""
