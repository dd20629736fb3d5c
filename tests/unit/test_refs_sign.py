"""NOTE(exact-sign) in checker/engines/param/refs.py: a circuit's relation comes out with one sign
whatever floating-point noise the null vector carries (the BLAS build decides that noise)."""

import numpy as np
import pytest

from gpcheck.checker.engines.param.refs import _relation


@pytest.mark.parametrize("noise", [-1e-13, 0.0, 1e-13])
def test_equal_magnitude_relation_has_one_sign_under_float_noise(noise):
    # columns a, b with a - b == 2 on every row: the null vector's two coefficients tie in magnitude
    exact = np.array([[3, 1], [5, 3], [4, 2], [9, 7]], dtype=np.int64)
    fb = exact.astype(np.float64)
    fb[0, 0] += noise  # what another BLAS's rounding would leave
    rel = _relation(fb[:3], exact)
    assert rel == ([1, -1], 2)

