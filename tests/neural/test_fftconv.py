import numpy as np
import pytest
import torch

from lds_toolkit.neural.layers._fftconv import causal_conv, fast_fft_len, fft_len


def _smooth(n):
    for p in (2, 3, 5):
        while n % p == 0:
            n //= p
    return n == 1


def test_fast_fft_len_is_smallest_5_smooth():
    for n in range(1, 600):
        m = fast_fft_len(n)
        assert m >= n and _smooth(m)
        assert not any(_smooth(j) for j in range(n, m))
    assert fft_len(1024, 1024) == 2048  # 2L for power-of-two L, as state-spaces/s4


@pytest.mark.parametrize("L, Lk", [(1, 1), (17, 17), (64, 5), (33, 100), (1000, 1000)])
def test_causal_conv_matches_numpy(L, Lk):
    rng = np.random.default_rng(L + Lk)
    u = rng.standard_normal((2, 3, L))
    k = rng.standard_normal((3, Lk))
    y = causal_conv(torch.from_numpy(u), torch.from_numpy(k)).numpy()
    ref = np.array([[np.convolve(u[b, h], k[h])[:L] for h in range(3)] for b in range(2)])
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-11 * max(1, np.sqrt(L)))


def test_causal_conv_precomputed_kernel_and_dtypes():
    u = torch.randn(2, 4, 50, dtype=torch.float64)
    k = torch.randn(4, 50, dtype=torch.float64)
    n = fft_len(50, 50)
    y1 = causal_conv(u, k)
    y2 = causal_conv(u, k_f=torch.fft.rfft(k, n=n), n=n)
    torch.testing.assert_close(y1, y2, rtol=0, atol=1e-12)
    y16 = causal_conv(u.bfloat16(), k.bfloat16())
    assert y16.dtype == torch.bfloat16
    with pytest.raises(TypeError, match="k_f"):
        causal_conv(u)


def _naive_conv(u, k):
    """The causal convolution as a plain loop over lags: autograd differentiates it directly."""
    L = u.shape[-1]
    y = torch.zeros(torch.broadcast_shapes(u.shape[:-1], k.shape[:-1]) + (L,), dtype=u.dtype)
    for j in range(min(k.shape[-1], L)):
        y = y + k[..., j : j + 1] * torch.nn.functional.pad(u, (j, 0))[..., :L]
    return y


@pytest.mark.parametrize("u_shape, k_shape, n", [
    ((2, 3, 20), (3, 20), None),   # kernel shared over the batch (S4, STU, Focus' global conv)
    ((2, 3, 20), (2, 3, 7), None),  # one kernel per row (Focus' bins), short kernel
    ((1, 3, 16), (4, 3, 16), 40),   # the input broadcast over the kernel's batch; odd n
    ((3, 12), (3, 30), None),       # kernel longer than the sequence
])
def test_causal_conv_gradient_matches_naive_loop(u_shape, k_shape, n):
    """The hand-written backward (CausalFFTConv) against autograd through a naive loop, with
    broadcasting both ways; plus torch's numerical gradcheck."""
    gen = torch.Generator().manual_seed(sum(u_shape) + sum(k_shape))
    u = torch.randn(u_shape, dtype=torch.float64, generator=gen, requires_grad=True)
    k = torch.randn(k_shape, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(torch.broadcast_shapes(u_shape[:-1], k_shape[:-1]) + (u_shape[-1],),
                    dtype=torch.float64, generator=gen)
    kw = {} if n is None else {"n": n}
    y = causal_conv(u, k, **kw)
    ref = _naive_conv(u, k)
    torch.testing.assert_close(y, ref, rtol=0, atol=1e-12)
    g = torch.autograd.grad((w * y).sum(), (u, k))
    g_ref = torch.autograd.grad((w * ref).sum(), (u, k))
    for a, b, name in zip(g, g_ref, ("u", "k")):
        assert a.shape == b.shape, name
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12, msg=name)
    assert torch.autograd.gradcheck(lambda a, b: causal_conv(a, b, **kw), (u, k))


def test_causal_conv_gradient_of_one_input_only_and_float32():
    u = torch.randn(2, 3, 64, requires_grad=True)
    k = torch.randn(3, 64)
    (gu,) = torch.autograd.grad(causal_conv(u, k).square().sum(), u)
    u64 = u.detach().double().requires_grad_()
    (gu64,) = torch.autograd.grad(_naive_conv(u64, k.double()).square().sum(), u64)
    assert gu.dtype == torch.float32
    torch.testing.assert_close(gu.double(), gu64, rtol=1e-5, atol=1e-4)


def test_causal_conv_second_derivative_is_refused():
    u = torch.randn(1, 2, 8, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 8, dtype=torch.float64, requires_grad=True)
    (gu,) = torch.autograd.grad(causal_conv(u, k).square().sum(), u, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable|double backward|twice"):
        gu.sum().backward()


def test_causal_conv_under_vmap_equals_each_slice_and_its_gradient():
    """torch.func.vmap over a stacked axis (several runs trained at once): the hand-written
    backward gives every slice the gradients of the naive loop for that slice alone."""
    from torch.func import grad, vmap

    gen = torch.Generator().manual_seed(5)
    u = torch.randn(3, 2, 4, 24, dtype=torch.float64, generator=gen)  # 3 runs
    k = torch.randn(3, 4, 24, dtype=torch.float64, generator=gen)
    w = torch.randn(3, 2, 4, 24, dtype=torch.float64, generator=gen)

    def loss(u1, k1, w1):
        return (w1 * causal_conv(u1, k1)).sum()

    gu, gk = vmap(grad(loss, argnums=(0, 1)))(u, k, w)
    y = vmap(causal_conv)(u, k)
    for i in range(3):
        ui, ki = u[i].clone().requires_grad_(), k[i].clone().requires_grad_()
        ref = _naive_conv(ui, ki)
        torch.testing.assert_close(y[i], ref.detach(), rtol=0, atol=1e-12)
        ref_u, ref_k = torch.autograd.grad((w[i] * ref).sum(), (ui, ki))
        torch.testing.assert_close(gu[i], ref_u, rtol=0, atol=1e-12)
        torch.testing.assert_close(gk[i], ref_k, rtol=0, atol=1e-12)
