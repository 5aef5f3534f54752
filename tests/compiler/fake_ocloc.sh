#!/bin/sh
# TEST-ONLY stand-in for ocloc, for faults the real one cannot be made to
# show: FAKE_OCLOC_MODE=crash dies of SIGSEGV; =silent exits 0 writing nothing.
case "$FAKE_OCLOC_MODE" in
  crash) kill -SEGV $$ ;;
  *) exit 0 ;;
esac
