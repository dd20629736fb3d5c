"""The observation check of a trace (`gpcheck check TRACE`): model-free properties from
traces/observe.py, printed as a summary table or one JSON object.

`checker/cli/commands/check.py` dispatches here when its argument is a trace; the flags below can be
added to its parser with `add_observation_flags` (they default to the library's defaults)."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from gpcheck.checker.cli.commands.common import write_out
from gpcheck.checker.cli.commands.flags import non_negative
from gpcheck.spec.errors import GpcheckError
from gpcheck.traces.observe import PROPERTIES, ObservationReport, ObserveOptions, observe, render_text

EXIT_OK, EXIT_VIOLATED, EXIT_USAGE = 0, 1, 2


def add_observation_flags(p: argparse.ArgumentParser) -> None:
    """Thresholds of the observation properties (all in nanoseconds)."""
    p.add_argument("--max-inversion", type=non_negative, default=None, metavar="NS",
                   help="(traces) a priority-inversion window longer than this is a violation")
    p.add_argument("--gap-threshold", type=non_negative, default=ObserveOptions.gap_threshold_ns, metavar="NS",
                   help="(traces) shortest switched-out period or stretch reported (default %(default)s)")
    p.add_argument("--max-gap", type=non_negative, default=None, metavar="NS",
                   help="(traces) a switched-out period longer than this is a violation")
    p.add_argument("--max-delay", type=non_negative, default=None, metavar="NS",
                   help="(traces) a launch-to-start delay longer than this is a violation (launch_delay)")
    p.add_argument("--max-blocking", type=non_negative, default=None, metavar="NS",
                   help="(traces) a higher-priority kernel blocked longer than this by lower-priority kernels "
                        "already running is a violation (blocking)")


def options_of(args: argparse.Namespace) -> ObserveOptions:
    return ObserveOptions(max_inversion_ns=getattr(args, "max_inversion", None),
                          gap_threshold_ns=getattr(args, "gap_threshold", ObserveOptions.gap_threshold_ns),
                          max_gap_ns=getattr(args, "max_gap", None),
                          max_delay_ns=getattr(args, "max_delay", None),
                          max_blocking_ns=getattr(args, "max_blocking", None))


def observation_report(path: str, properties: Sequence[str] | None,
                       options: ObserveOptions | None = None) -> ObservationReport:
    """The observation report of one trace: what `gpcheck check TRACE` prints, and each row of
    `gpcheck check TRACE...` (checker/cli/commands/check.py `trace_outcome`). GpcheckError on bad input."""
    for p in properties or ():
        if p not in PROPERTIES:
            raise GpcheckError(f"unknown observation property {p!r} (known: {', '.join(PROPERTIES)})")
    return observe(path, properties or None, options or ObserveOptions())


def run_observation_check(path: str, properties: Sequence[str] | None, as_json: bool,
                          options: ObserveOptions | None = None) -> int:
    """Check a trace's observation properties and print the report. Exit code: 0 every checked
    property holds (informational findings allowed), 1 a property is violated, 2 bad input (the
    message goes to stderr)."""
    try:
        report = observation_report(path, properties, options)
    except GpcheckError as e:
        sys.stderr.write(f"gpcheck: error: {e}\n")
        if as_json:  # the error as data too (checker/report/error_report.py)
            from gpcheck.checker.report.error_report import error_object
            from gpcheck.checker.report.render import to_json_bytes

            write_out(to_json_bytes(error_object(e, "trace")))
        return EXIT_USAGE
    if as_json:
        import orjson

        write_out(orjson.dumps(report.to_json()))
    else:
        write_out(render_text(report) + "\n")
    return report.exit_code
