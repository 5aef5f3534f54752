#!/bin/sh
# TEST-ONLY stand-in for ocloc, for faults the real one cannot be made to
# show: FAKE_OCLOC_MODE=crash dies of SIGSEGV; =silent exits 0 writing nothing.
# FAKE_OCLOC_CWD_FILE=FILE appends the directory it runs in (the scratch
# directory kcache made for the run) to FILE.
if [ -n "$FAKE_OCLOC_CWD_FILE" ]; then pwd >>"$FAKE_OCLOC_CWD_FILE"; fi
case "$FAKE_OCLOC_MODE" in
  crash) kill -SEGV $$ ;;
  *) exit 0 ;;
esac
