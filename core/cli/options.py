"""Argument groups shared by the commands that load one file and chunk it."""

from __future__ import annotations

import argparse


def add_file_and_policy_options(parser: argparse.ArgumentParser) -> None:
    """``FILE``, ``--password``, ``--policy``, ``--size``, ``--overlap``, ``--unit``,
    ``--parser``: what ``chunk`` and ``embed`` need to reproduce the same chunk spans."""
    parser.add_argument("file", metavar="FILE", help="a PDF, .txt or .md file")
    parser.add_argument("--password", help="password of an encrypted PDF")
    parser.add_argument(
        "--policy", required=True, choices=("fixed", "sentence", "structure"), help="policy"
    )
    parser.add_argument("--size", type=int, help="chunk size in --unit (default per policy)")
    parser.add_argument("--overlap", type=int, help="overlap in --unit (default per policy)")
    parser.add_argument(
        "--unit",
        choices=("chars", "tokens", "sentences"),
        help="unit of --size/--overlap (default: chars; sentence: sentences; structure: tokens)",
    )
    parser.add_argument(
        "--parser", choices=("fast", "layout"), default="fast", help="block parser (fast)"
    )
