"""Planted bugs for the privacy tests: a mechanism whose noise is scaled by a factor."""


def scaled_noise(mechanism, factor: float):
    """``mechanism`` with its noise (output − input) multiplied by ``factor``: × 2 is a
    noise-scale bug a reference comparison must catch, × 0.1 an overspend an audit must."""
    def noisy(values, **kwargs):
        out = mechanism(values, **kwargs)
        return values + factor * (out - values)
    return noisy
