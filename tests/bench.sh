#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make bench`: the benchmark suite (not part of `make test`). Prints a
# table of figures and which targets they meet. Usage: bench.sh [REPEAT]
cd "$(dirname "$0")/.." || exit 1
exec build/tests/bench "$@"
