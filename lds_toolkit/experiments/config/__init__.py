"""The config of a run: what each entry may hold, how ``--set`` changes it, and how it is built.

* :mod:`.ranges` — the declared ranges of config entries (:class:`~.ranges.Int`,
  :class:`~.ranges.Real`, :class:`~.ranges.ListOf`, ...), the relations between entries and
  the memory estimate, checked before any task runs; every experiment declares its
  ``ranges`` with them;
* :mod:`.overrides` — ``--set KEY=VALUE``: any entry of the config changed, type-checked;
* :mod:`.build` — :func:`build_config`: the experiment's own config at a scale, the
  overrides, the derived entries and the checks of every range; :func:`resolve_scale`.

Used by the runner (:mod:`lds_toolkit.experiments.runner`), by ``lds-toolkit report`` (the
standard config a run is compared with, :mod:`lds_toolkit.experiments.report`) and by the
command line; it imports only the :class:`~lds_toolkit.experiments.Experiment` contract and
the scales.
"""

from .build import COMMON_RANGES, build_config, resolve_scale

__all__ = ["COMMON_RANGES", "build_config", "resolve_scale"]
