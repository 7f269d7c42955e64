"""Matrix powers by doubling, for SSMs whose discrete state matrix is dense (DPLR S4).

All functions work on batched complex tensors, are differentiable and use O(log L) sequential
steps (no Python loop over time).

* :func:`krylov` — the columns ``A^l b``, ``l < L``.
* :func:`power_kernel` — ``K_l = c A^l b`` for ``l < L`` with ``l = m j + i``
  (``m ≈ sqrt(L)``): ``K_{mj+i} = (c A^{mj}) (A^i b)``, so memory is O(N sqrt(L)), not O(N L).
* :func:`linear_scan` — every state of ``x_k = A x_{k-1} + v_k`` (diagonal or dense ``A``) by
  the Hillis-Steele doubling scan: after the pass with shift ``s``, ``x_k`` holds
  ``sum_{j < 2s} A^j v_{k-j}``; exact in exact arithmetic, O(L log L) work.
"""

from __future__ import annotations

import math

import torch


def krylov(A: torch.Tensor, b: torch.Tensor, length: int) -> torch.Tensor:
    """``X[..., :, l] = A^l b`` for ``l < length``: ``A`` (..., N, N), ``b`` (..., N) ->
    (..., N, length). Doubling: ``[X, A^m X]`` with ``A^m`` squared after each step."""
    X = b.unsqueeze(-1)
    Am = A
    while X.shape[-1] < length:
        X = torch.cat([X, Am @ X], dim=-1)
        if X.shape[-1] < length:
            Am = Am @ Am
    return X[..., :length]


def power_kernel(A: torch.Tensor, b: torch.Tensor, c: torch.Tensor, length: int) -> torch.Tensor:
    """``K[..., l] = c A^l b`` for ``l < length`` (``c`` a row (..., N), ``b`` a column (..., N)).

    Cost O(N^3 log L + N^2 L), memory O(N sqrt(L)) per batch element.
    """
    m = max(1, math.isqrt(max(length - 1, 0)) + 1)
    q = -(-length // m)
    X = krylov(A, b, m)  # (..., N, m): A^i b
    R = krylov(torch.linalg.matrix_power(A, m).transpose(-1, -2), c, q)  # (..., N, q): c A^{mj}
    K = R.transpose(-1, -2) @ X  # (..., q, m)
    return K.reshape(*K.shape[:-2], q * m)[..., :length]


def linear_scan(
    A: torch.Tensor, v: torch.Tensor, x0: torch.Tensor | None = None, *, dense: bool = False
) -> torch.Tensor:
    """States ``x_k = A x_{k-1} + v_k`` (``k = 0..L-1``, ``x_{-1} = x0`` or 0).

    ``v`` (..., L, n) and ``x0`` (..., n); ``A`` the diagonal (..., n) of a diagonal matrix, or
    with ``dense=True`` a matrix (..., n, n); its leading axes broadcast against ``v``'s
    without the ``L`` axis. Returns (..., L, n).
    """
    L = v.shape[-2]
    if x0 is not None:  # fold the initial state into the first input: x_0 = A x0 + v_0
        first = (A @ x0.unsqueeze(-1)).squeeze(-1) if dense else A * x0
        v = torch.cat([(v[..., :1, :] + first.unsqueeze(-2)), v[..., 1:, :]], dim=-2)
    x, As, s = v, A, 1
    while s < L:
        if dense:
            moved = (As.unsqueeze(-3) @ x[..., :-s, :].unsqueeze(-1)).squeeze(-1)
        else:
            moved = As.unsqueeze(-2) * x[..., :-s, :]
        x = torch.cat([x[..., :s, :], x[..., s:, :] + moved], dim=-2)
        s *= 2
        if s < L:
            As = As @ As if dense else As * As
    return x
