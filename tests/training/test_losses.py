"""Each objective against a direct, slow reference written from its equation (loops, float64)."""

import math

import pytest

torch = pytest.importorskip("torch")

from hardneg.training.losses import (coarse_loss, fine_loss, llm_teacher_label_loss,  # noqa: E402
                                     llm_teacher_logit_loss, posrank_loss)

TAU = 0.13


def cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def s(a, b):
    return cos(a, b) / TAU


def ref_coarse(v, t):
    B = len(v)
    v2t = -sum(math.log(math.exp(s(v[i], t[i])) / sum(math.exp(s(v[i], t[j])) for j in range(B))) for i in range(B)) / B
    t2v = -sum(math.log(math.exp(s(v[i], t[i])) / sum(math.exp(s(v[j], t[i])) for j in range(B))) for i in range(B)) / B
    return v2t + t2v


def ref_fine(v, p, n, keep):
    """Eq. 3 / Eq. 1: -1/B sum_i log(exp s(v_i,p_i) / (exp s(v_i,p_i) + sum_{kept negs} exp s(v_i,n)))."""
    B = len(v)
    total = 0.0
    for i in range(B):
        num = math.exp(s(v[i], p[i]))
        den = num + sum(math.exp(s(v[i], n[i][k])) for k in range(len(n[i])) if keep[i][k])
        total += -math.log(num / den)
    return total / B


def ref_kl(v, p, n, teacher):
    B = len(v)
    total = 0.0
    for i in range(B):
        cands = [p[i]] + list(n[i])
        z = [math.exp(s(v[i], c)) for c in cands]
        zs = sum(z)
        for t, zt in zip(teacher[i], z):
            if t > 0:
                total += t * (math.log(t) - math.log(zt / zs))
    return total / B


def data(seed, B=4, K=6, D=5):
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(B, D, generator=g, dtype=torch.float64, requires_grad=True)
    p = torch.randn(B, D, generator=g, dtype=torch.float64, requires_grad=True)
    n = torch.randn(B, K, D, generator=g, dtype=torch.float64, requires_grad=True)
    mask = torch.rand(B, K, generator=g) > 0.3
    tl = torch.rand(B, 1 + K, generator=g, dtype=torch.float64)
    teacher = tl / tl.sum(1, keepdim=True)
    return v, p, n, mask, teacher


def lists(x):
    return x.detach().tolist()


def finite_diff_grad(f, x, eps=1e-6):
    """Central differences of the scalar f() with respect to every entry of x (float64)."""
    g = torch.zeros_like(x)
    flat = x.detach().view(-1)
    for j in range(flat.numel()):
        old = flat[j].item()
        flat[j] = old + eps
        hi = f()
        flat[j] = old - eps
        lo = f()
        flat[j] = old
        g.view(-1)[j] = (hi - lo) / (2 * eps)
    return g


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_coarse_matches_reference(seed):
    v, p, *_ = data(seed)
    got = coarse_loss(v, p, TAU)
    assert got.item() == pytest.approx(ref_coarse(lists(v), lists(p)), abs=1e-6)
    got.backward()
    for x in (v, p):
        fd = finite_diff_grad(lambda: ref_coarse(lists(v), lists(p)), x)
        assert torch.allclose(x.grad, fd, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("masked", [False, True])
def test_fine_and_label_losses_match_reference(seed, masked):
    v, p, n, mask, _ = data(seed)
    keep = lists(mask) if masked else [[True] * n.shape[1] for _ in range(n.shape[0])]
    for fn in ("fine", "label"):
        for x in (v, p, n):
            x.grad = None
        if fn == "fine":
            got = fine_loss(v, p, n, TAU, mask if masked else None)
        else:  # pseudo-label 1 (a caption the teacher calls matching) leaves the denominator
            labels = (~mask).long() if masked else None
            got = llm_teacher_label_loss(v, p, n, TAU, labels)
        ref = lambda: ref_fine(lists(v), lists(p), lists(n), keep)  # noqa: E731
        assert got.item() == pytest.approx(ref(), abs=1e-6)
        got.backward()
        for x in (v, p, n):
            assert torch.allclose(x.grad, finite_diff_grad(ref, x), atol=1e-6)


@pytest.mark.parametrize("seed", [0, 3])
def test_posrank_eq4_is_coarse_plus_lambda_fine(seed):
    v, p, n, mask, _ = data(seed)
    fv = torch.randn_like(v)
    keep = lists(mask)
    got = posrank_loss(v, p, n, TAU, lam=0.2, mask=mask, fine_video=fv)
    ref = ref_coarse(lists(v), lists(p)) + 0.2 * ref_fine(lists(fv), lists(p), lists(n), keep)
    assert got.item() == pytest.approx(ref, abs=1e-6)
    got.backward()
    fd = finite_diff_grad(lambda: ref_coarse(lists(v), lists(p)) + 0.2 * ref_fine(lists(fv), lists(p), lists(n), keep), p)
    assert torch.allclose(p.grad, fd, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 4])
def test_logit_loss_matches_reference(seed):
    v, p, n, _, teacher = data(seed)
    got = llm_teacher_logit_loss(v, p, n, teacher, TAU)
    ref = lambda: ref_kl(lists(v), lists(p), lists(n), lists(teacher))  # noqa: E731
    assert got.item() == pytest.approx(ref(), abs=1e-6)
    got.backward()
    for x in (v, p, n):
        assert torch.allclose(x.grad, finite_diff_grad(ref, x), atol=1e-6)


def test_logit_loss_is_zero_when_model_equals_teacher_and_teacher_from_soft_targets():
    from hardneg.generators.llm_teacher import soft_targets

    v, p, n, _, _ = data(5)
    with torch.no_grad():
        logits = torch.cat([torch.nn.functional.normalize(p, dim=-1).unsqueeze(1),
                            torch.nn.functional.normalize(n, dim=-1)], 1) @ torch.nn.functional.normalize(v, dim=-1).unsqueeze(2)
        teacher = torch.softmax(logits.squeeze(2) / TAU, 1)
    assert llm_teacher_logit_loss(v, p, n, teacher, TAU).item() == pytest.approx(0.0, abs=1e-9)
    # the generator's soft_targets is Eq. 2's z_LLM: the teacher of the positive puts most mass on it
    z = soft_targets(p[0].detach().numpy(), torch.cat([p[:1], n[0]]).detach().numpy(), tau=TAU)
    assert z.argmax() == 0 and z.sum() == pytest.approx(1.0)


def test_gradcheck_all_losses():
    v, p, n, mask, teacher = data(6, B=3, K=4, D=3)
    tau = torch.tensor(0.2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b, t: coarse_loss(a, b, t), (v, p, tau))
    assert torch.autograd.gradcheck(lambda a, b, c, t: fine_loss(a, b, c, t, mask), (v, p, n, tau))
    assert torch.autograd.gradcheck(lambda a, b, c, t: posrank_loss(a, b, c, t, 0.2, mask), (v, p, n, tau))
    assert torch.autograd.gradcheck(lambda a, b, c, t: llm_teacher_label_loss(a, b, c, t), (v, p, n, tau))
    assert torch.autograd.gradcheck(lambda a, b, c, t: llm_teacher_logit_loss(a, b, c, teacher, t), (v, p, n, tau))


def test_bad_shapes_and_temperature_are_refused():
    v, p, n, _, teacher = data(7)
    with pytest.raises(ValueError, match="pairs"):
        coarse_loss(v, p[:2])
    with pytest.raises(ValueError, match="negatives"):
        fine_loss(v, p, n[0])
    with pytest.raises(ValueError, match="temperature"):
        coarse_loss(v, p, 0.0)
    with pytest.raises(ValueError, match="teacher"):
        llm_teacher_logit_loss(v, p, n, teacher[:, :2])


def ref_fine_printed(v, p, n, keep):
    """PoSRank Eq. 3 exactly as printed: -1/B sum_i log(exp s(v_i,t_i) / sum_{negs} exp s(v_i,t))."""
    rows = [i for i in range(len(v)) if any(keep[i])]
    total = 0.0
    for i in rows:
        num = math.exp(s(v[i], p[i]))
        den = sum(math.exp(s(v[i], n[i][k])) for k in range(len(n[i])) if keep[i][k])
        total += -math.log(num / den)
    return total / len(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("masked", [False, True])
def test_eq3_as_printed_matches_reference_beside_the_projects_variant(seed, masked):
    v, p, n, mask, _ = data(seed)
    if masked:
        mask[1] = False  # a caption without negatives has no printed term
    keep = lists(mask) if masked else [[True] * n.shape[1] for _ in range(n.shape[0])]
    got = fine_loss(v, p, n, TAU, mask if masked else None, denominator="printed")
    ref = lambda: ref_fine_printed(lists(v), lists(p), lists(n), keep)  # noqa: E731
    assert got.item() == pytest.approx(ref(), abs=1e-6)
    got.backward()
    for x in (v, p, n):
        assert torch.allclose(x.grad, finite_diff_grad(ref, x), atol=1e-6)
    # the project's variant differs exactly by the positive in the denominator: always larger, bounded below by 0
    ours = fine_loss(v, p, n, TAU, mask if masked else None).item()
    rows = [i for i in range(len(keep)) if any(keep[i])] if masked else range(len(keep))
    assert ours >= 0 and (not masked or len(rows) < len(keep) or ours > got.item())


def test_eq3_as_printed_is_unbounded_below_and_refuses_no_negatives():
    v, p, n, _, _ = data(8)
    far = -p.detach().unsqueeze(1).expand_as(n) * 1.0  # negatives opposite to the positive, video on the positive
    assert fine_loss(p.detach(), p.detach(), far, 0.01, denominator="printed").item() < -100
    with pytest.raises(ValueError, match="at least one negative"):
        fine_loss(v, p, n, TAU, torch.zeros(n.shape[:2], dtype=torch.bool), denominator="printed")
    with pytest.raises(ValueError, match="denominator"):
        fine_loss(v, p, n, TAU, denominator="paper")


@pytest.mark.parametrize("seed", [0, 5])
def test_eq1_with_real_teacher_labels_matches_reference(seed):
    """Eq. 1 with a teacher's binary labels (1 = matches, leaves the denominator), none all-zero, against
    a reference that reads the labels directly."""
    v, p, n, _, _ = data(seed)
    g = torch.Generator().manual_seed(seed + 100)
    labels = (torch.rand(n.shape[:2], generator=g) < 0.4).long()
    labels[0] = 0
    labels[1, 0] = 1
    keep = [[lab == 0 for lab in row] for row in labels.tolist()]
    got = llm_teacher_label_loss(v, p, n, TAU, labels=labels)
    ref = lambda: ref_fine(lists(v), lists(p), lists(n), keep)  # noqa: E731
    assert got.item() == pytest.approx(ref(), abs=1e-6)
    assert got.item() != pytest.approx(llm_teacher_label_loss(v, p, n, TAU).item(), abs=1e-6)  # labels matter
    got.backward()
    for x in (v, p, n):
        assert torch.allclose(x.grad, finite_diff_grad(ref, x), atol=1e-6)
