"""The old spelling of the calibration stream job, kept for one release.

``python -m slotwise.streams.calibrate_app`` still runs the job; the job itself
is :mod:`slotwise.streams.passes.calibration_app`.
"""

import sys

from slotwise.streams.passes.calibration_app import main

if __name__ == "__main__":
    print(
        "slotwise.streams.calibrate_app is deprecated: run "
        "python -m slotwise.streams.passes.calibration_app",
        file=sys.stderr,
    )
    main()
