"""`hardneg.train(...)`: train a video-text model against hard negatives, seeded and resumable.

One run writes one folder that is at once the checkpoint (`config.json` + `model.safetensors`,
scored by path through the `trained` adapter: `hardneg score --model OUT`) and the run's state
(`trainer_state.safetensors`: weights, optimizer, step, no pickle (`hardneg.training.state`); `negatives.parquet`: the negatives a generator
made; `train_log.jsonl`: loss per step). Everything random is a function of (seed, step): model
initialisation from `seed`, the batch order of epoch e from (seed, e), the negatives sampled at
step s from (seed, s). A run killed at any point and resumed with `resume=True` therefore ends
with the same bytes as one that never stopped.

Objectives (`OBJECTIVES`; equations in `hardneg.training.losses`):
* `coarse`: L_coarse (PoSRank Sec. 6.1).
* `word`: L_coarse + lambda L_fine with word-level negatives (PoSRank Eq. 4; generator `posrank`).
* `phrase`: the same with phrase-level negatives (Sec. 6.3; generator `posrank_phrase`).
* `prompt`: phrase-level negatives, L_fine on a learnable visual prompt token, L_coarse on CLS (Sec. 6.4).
* `llm-lbl`: L_coarse + lambda Eq. 1 (Feint6K LLM-teacher, binary labels; generator `llm_teacher`).
* `llm-lgt`: L_coarse + lambda Eq. 2 (soft logits from a sentence-embedding teacher).
Feint6K does not say how Eq. 1/2 combine with the fine-tuning loss; keeping L_coarse with the same
lambda keeps retrieval trained and makes the six rows comparable.

Several GPUs or nodes: launch the same command with `torchrun` (torch.distributed, DDP); each
process takes its share of every batch, rank 0 writes the checkpoint.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hardneg.settings_keywords import keyword_signature, settings_from
from hardneg.training.losses import coarse_loss, fine_loss, llm_teacher_label_loss, llm_teacher_logit_loss
from hardneg.training.objectives import OBJECTIVE_RECORDS
from hardneg.training.spec import DEFAULT_TEACHER, TrainSettings, TrainSpec
from hardneg.training.state import LEGACY_STATE, STATE, apply_state, load_state, state_bytes

LOG = "train_log.jsonl"
NEGATIVES = "negatives.parquet"

#: objective -> (default negatives generator, prompt token): a view of the records in `hardneg.training.objectives`
OBJECTIVE_NEEDS = {name: (o.generator, o.prompt) for name, o in OBJECTIVE_RECORDS.items()}
TEACHER_TAU = 0.07


class TrainingDiverged(ValueError):
    """The loss (or a gradient) stopped being finite; the last good state was saved."""


@dataclass
class TrainResult:
    out: Path
    steps: int
    resumed_from: int
    last_loss: float | None
    provenance: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)


# ------------------------------------------------------------------------------------ helpers


def _versions() -> dict[str, str]:
    import torch

    from hardneg import __version__

    out = {"hardneg": __version__, "torch": torch.__version__, "python": platform.python_version()}
    try:
        import transformers

        out["transformers"] = transformers.__version__
    except ImportError:
        pass
    return out


def _distributed():
    """(rank, world size) under torchrun, initialising the process group once; (0, 1) otherwise."""
    import torch.distributed as dist

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1
    if not dist.is_initialized():
        import torch

        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), dist.get_world_size()


def _barrier(world: int) -> None:
    if world > 1:
        import torch.distributed as dist

        dist.barrier()


def _check_output(out: Path, settings: TrainSettings, resume: bool, overwrite: bool) -> dict | None:
    """The saved state to resume from (or None), after refusing to mix two runs in one folder.

    Nothing in `out` is read unless `resume`: without it, only which files exist is looked at. The state is a
    safetensors file (`hardneg.training.state`); an older run's pickle (`trainer_state.pt`) is never loaded."""
    state_path = out / STATE
    has_run = any((out / n).is_file() for n in (STATE, LEGACY_STATE, "config.json"))
    if not has_run:
        if out.exists() and not out.is_dir():
            raise FileExistsError(f"--out {out} is a file; give a folder for the checkpoint")
        if out.exists() and any(out.iterdir()) and not overwrite:
            raise FileExistsError(f"output folder {out} is not empty and holds no training run; choose a new "
                                  "folder or pass --overwrite")
        return None
    if overwrite and not resume:
        for name in (STATE, LEGACY_STATE, "config.json", "model.safetensors", LOG, NEGATIVES):
            (out / name).unlink(missing_ok=True)
        return None
    if not resume:
        raise FileExistsError(f"output folder {out} holds another run's checkpoint; pass --resume to continue "
                              "it or --overwrite to replace it, or choose a new folder")
    if not state_path.is_file():
        legacy = (f" (only {LEGACY_STATE}, the pickle an older hardneg wrote: it is never loaded, since loading a "
                  "pickle runs code)") if (out / LEGACY_STATE).is_file() else ""
        raise FileNotFoundError(f"{out} has a checkpoint but no {STATE} to resume from{legacy}; pass --overwrite "
                                "to start again")
    saved = load_state(state_path)
    if saved["settings_key"] != settings.key():
        now = asdict(settings)
        diff = {k: (saved["settings"].get(k), now[k]) for k in now if saved["settings"].get(k) != now[k]}
        raise ValueError(f"--resume: {out} was trained with different settings {diff} (saved, now); resume with "
                         "the same settings, or pass --overwrite to start a new run there")
    return saved


def _clean_temporaries(out: Path) -> None:
    """Remove the temporary files an atomic write leaves when its process is killed mid-write
    (`hardneg.io`: `.<name>.<random>.tmp` next to the file): a finished folder holds none."""
    if out.is_dir():
        for tmp in out.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)


def _save(out: Path, net, optimizer, step: int, settings: TrainSettings, provenance: dict, status: str,
          last_loss: float | None) -> None:
    from hardneg.io import atomic_write_bytes
    import torch

    from hardneg.models.trainable import save_checkpoint

    weights = net.state_dict()
    bad = [n for n, t in weights.items() if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    if bad:  # never write a checkpoint of NaNs over the last good one (issue 36 N4)
        raise TrainingDiverged(f"the weights {bad[:3]} are not finite at step {step}; nothing was written (the last "
                               f"good state in {out} is kept); lower --lr, or pass --overwrite to start again")
    atomic_write_bytes(out / STATE, state_bytes(step=step, settings=asdict(settings), settings_key=settings.key(),
                                                model=weights, optimizer=optimizer.state_dict(),
                                                status=status, last_loss=last_loss))
    head = "prompt" if net.has_prompt else "cls"
    save_checkpoint(net, out, {"score_head": head, "step": step, "status": status,
                               "frames": provenance["frames"],
                               "provenance": provenance})


def _writable(out: Path) -> None:
    """Create `out` and make sure a file can be written there, before any work: a ValueError names the folder."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".hardneg-write-check-{os.getpid()}.tmp"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--out {out} cannot be written ({type(exc).__name__}: {exc.strerror or exc}); choose a "
                         "folder you can write to") from None


def _trim_log(out: Path, step: int) -> None:
    """Keep the log rows up to `step` (the resumed state's): rows a killed run logged after its last saved state
    are run again, so they would appear twice."""
    from hardneg.io import atomic_write_text

    path = out / LOG
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    keep = []
    for line in lines:
        try:
            if int(json.loads(line)["step"]) <= step:
                keep.append(line)
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by a kill mid-append
    if keep != lines:
        atomic_write_text(path, "".join(k + "\n" for k in keep))


def _append_log(out: Path, rows: list[dict]) -> None:
    if rows:
        with (out / LOG).open("a", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")


def _sample_negatives(negs, captions: list[str], n: int, rng: np.random.Generator) -> list[list[str]]:
    """Up to n negatives per category for each caption (categories in sorted order), flattened."""
    out = []
    for c in captions:
        got: list[str] = []
        for cat, pool in sorted((negs.by_caption.get(c) or {}).items()):
            take = pool if len(pool) <= n else [pool[i] for i in sorted(rng.choice(len(pool), n, replace=False))]
            got.extend(take)
        out.append(got)
    return out


def _teacher_embeddings(name: str, texts: list[str]) -> dict[str, np.ndarray]:
    """Sentence embeddings of `texts` by the Eq. 2 teacher, cached on disk (same texts, same model: same file)."""
    from hardneg.io import atomic_write_bytes
    from hardneg.resources import cache_dir, load_sentence_model

    key = hashlib.sha256(json.dumps([name, texts]).encode()).hexdigest()[:20]
    path = cache_dir() / "teacher-embeddings" / f"{key}.npy"
    if path.is_file():
        try:
            emb = np.load(path, allow_pickle=False)
            if emb.shape[0] == len(texts):
                return dict(zip(texts, emb))
        except (OSError, ValueError):
            pass
    model = load_sentence_model(name)
    emb = np.asarray(model.encode(texts, batch_size=256, convert_to_numpy=True, show_progress_bar=False), np.float64)
    buf = io.BytesIO()
    np.save(buf, emb, allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())
    return dict(zip(texts, emb))


# --------------------------------------------------------------------------------------- train


def train(model: str = "tiny-temporal", data: str | Path = "", out: str | Path = "hardneg-train", *,
          _stop_after: int | None = None, **settings: Any) -> TrainResult:
    """Train `model` on `data` with `objective` and write a checkpoint folder `out`.

    The keywords are `TrainSpec`'s fields (`hardneg.training.spec`, which documents each):
    model: "tiny-temporal" (built-in, sees frame order), "tiny-clip", a CLIP Hub id or folder, or a
        `hardneg train` checkpoint to continue from.
    data: a built benchmark folder with a train split, or a folder/file of video-caption pairs.
    objective: one of `hardneg.training.objectives.OBJECTIVES`.
    negatives: a generator name run on the fly (default: the objective's, see OBJECTIVE_NEEDS) or a
        Parquet file of generator output; negatives_settings: the generator's settings.
    steps (or epochs): length; seed: everything random; lam, n_negatives: Eq. 4's lambda and N per
        part of speech (or per category); teacher: Eq. 2's sentence-embedding model.
    resume / overwrite: continue the run in `out`, or replace it (refused without one of them).
    device: "cpu", "cuda" (default: a GPU when visible); there, bfloat16 autocast and (compile=None)
        torch.compile. progress: a progress bar.
    Built from a `TrainSpec` already: `run_training(spec)`.
    """
    spec = settings_from(TrainSpec, None, {"model": model, "data": data, "out": out, **settings}, "train")
    return run_training(spec, _stop_after=_stop_after)


train.__signature__ = keyword_signature(train, TrainSpec)


def run_training(spec: TrainSpec, *, _stop_after: int | None = None) -> TrainResult:
    """Run the training `spec` describes (seeded and resumable; see the module docstring)."""
    import torch

    from hardneg.models.base import pick_device
    from hardneg.models.trainable import build_network
    from hardneg.training.data import decode_videos, generate_negatives, load_pairs, read_negatives
    from hardneg.video import FrameSettings

    if not isinstance(spec, TrainSpec):
        raise TypeError(f"run_training takes a TrainSpec, got {type(spec).__name__}; hardneg.train(...) takes keywords")
    record = spec.objective_record
    model, data, videos, objective = spec.model, spec.data, spec.videos, spec.objective
    negatives, resize, teacher, limit = spec.negatives_source, spec.resize, spec.teacher, spec.limit
    steps, epochs, batch_size, lr, seed = spec.steps, spec.epochs, spec.batch_size, spec.lr, spec.seed
    lam, n_negatives, n_frames, save_every, progress = spec.lam, spec.n_negatives, spec.n_frames, spec.save_every, spec.progress
    prompt = record.prompt
    settings = spec.settings()
    rank, world = _distributed()
    dev = pick_device(spec.device)
    if world > 1 and dev.startswith("cuda"):
        dev = f"cuda:{int(os.environ.get('LOCAL_RANK', rank))}"
        torch.cuda.set_device(dev)
    out = Path(spec.out).expanduser()
    saved = _check_output(out, settings, spec.resume, spec.overwrite) if rank == 0 else None
    _barrier(world)
    if rank != 0 and spec.resume and (out / STATE).is_file():
        saved = load_state(out / STATE)
    _writable(out)
    if rank == 0:
        _clean_temporaries(out)  # left by a run killed mid-write

    # ---- data (all checks before any training step)
    pairs = load_pairs(data, videos, limit)
    if len(pairs) < batch_size:
        raise ValueError(f"{len(pairs)} training pairs but batch_size {batch_size}: lower --batch-size")
    negs = None
    if negatives:
        if Path(negatives).suffix == ".parquet" or Path(negatives).is_file():
            negs = read_negatives(negatives)
        else:
            if rank == 0:
                negs = generate_negatives(negatives, pairs.captions, settings.negatives_settings, out / NEGATIVES,
                                          progress=progress)
            _barrier(world)
            if rank != 0:
                negs = generate_negatives(negatives, pairs.captions, settings.negatives_settings, out / NEGATIVES)
        cov = negs.coverage(pairs.captions)
        if cov == 0:
            raise ValueError(f"none of the {len(pairs)} training captions has a negative in {negatives}; the "
                             "negatives must be generated from these captions")
    if resize is None:
        resize = 64 if model == "tiny-temporal" or Path(str(model), "config.json").is_file() else None
    frames = FrameSettings(n_frames=n_frames, resize=resize)
    t_decode = time.perf_counter()
    video_frames, rows = decode_videos(pairs, frames, progress=progress and rank == 0)
    timings = {"decode_s": time.perf_counter() - t_decode}

    teacher_emb = None
    if record.extra == "logit":
        texts = sorted(set(pairs.captions) | {n for d in negs.by_caption.values() for ns in d.values() for n in ns})
        teacher_emb = _teacher_embeddings(teacher, texts)

    # ---- model and optimiser (seeded)
    torch.manual_seed(seed)
    # the vocabulary comes from the training captions alone (a negative's unseen word reads as <unk>), so every
    # objective starts from the same weights at a seed (issue 28)
    net = build_network(str(model), list(pairs.captions), prompt=prompt, n_frames=n_frames).to(dev)
    trainable = [p for p in net.parameters() if p.requires_grad]
    if not trainable:
        raise ValueError(f"model {model} has no trainable parameters: nothing to train")
    optimizer = torch.optim.AdamW(trainable, lr=lr, weight_decay=spec.weight_decay)
    start = 0
    if saved is not None:
        apply_state(saved, net, optimizer, out / STATE)
        start = int(saved["step"])
        if rank == 0:
            _trim_log(out, start)
    per_epoch = max(1, len(pairs) // batch_size)
    total = steps if steps is not None else epochs * per_epoch

    from hardneg.generators import generator_info

    provenance = {
        "data": pairs.source, "videos": str(pairs.videos), "frames": frames.identity(),
        "negatives": negs.source if negs is not None else None, "objective": objective,
        "equations": record.equation,
        "lambda": lam if record.extra else None, "n_negatives": n_negatives if record.extra else None,
        "teacher": {"model": teacher, "tau": TEACHER_TAU} if record.extra == "logit" else None,
        "eq1_labels": "no teacher offline: every synthesized caption labelled 0 (the paper's LLM is not run)"
        if record.extra == "label" else None,
        "fine_denominator": "with the positive (Eq. 3 as printed sums the negatives only)"
        if record.extra == "fine" else None,
        "model": {"base": str(model), "architecture": net.architecture, "prompt": net.has_prompt},
        "seed": seed, "steps": total, "batch_size": batch_size, "lr": lr, "weight_decay": spec.weight_decay,
        "world_size": world, "versions": _versions(), "settings_key": settings.key(),
    }
    if negs is not None and negs.source.get("kind") == "generator":
        provenance["negatives"]["generator_record"] = list(generator_info(negs.source["generator"]))

    # ---- engine: DDP, autocast and compile on a GPU only
    run_net = net
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        run_net = DistributedDataParallel(net, device_ids=[dev] if dev.startswith("cuda") else None)
    cuda = dev.startswith("cuda")
    if cuda and (spec.compile is None or spec.compile):
        run_net = torch.compile(run_net)
    elif spec.compile and not cuda:
        raise ValueError("--compile needs a GPU; on the CPU the model runs eagerly")

    frames_t = torch.from_numpy(video_frames)
    rows_arr = np.asarray(rows)
    last_loss = saved.get("last_loss") if saved else None
    bar = None
    if progress and rank == 0 and not cuda:  # a long CPU run says so before it starts (hardneg.expected)
        from hardneg.expected import announce

        announce("train" if record.extra is None else "train with negatives", total - start)
    if progress and rank == 0:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=start, desc=f"train {objective}", unit="step")
    log_rows: list[dict] = []
    step = start
    net.train()
    t_steps = time.perf_counter()
    try:
        for step in range(start, total):
            if _stop_after is not None and step >= _stop_after:  # tests: stop as a kill would, without saving
                os._exit(17)
            epoch, b = divmod(step, per_epoch)
            order = np.random.default_rng([seed, epoch]).permutation(len(pairs))
            idx = order[b * batch_size:(b + 1) * batch_size][rank::world]
            caps = [pairs.captions[i] for i in idx]
            vids = frames_t[torch.from_numpy(rows_arr[idx])]
            rng = np.random.default_rng([seed, 1_000_003, step, rank])
            neg_lists = _sample_negatives(negs, caps, n_negatives, rng) if negs is not None else None
            texts = list(dict.fromkeys(caps + [t for ns in (neg_lists or []) for t in ns]))
            where = {t: i for i, t in enumerate(texts)}
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
                cls, prm, temb = run_net(vids, texts)
            cls, temb = cls.float(), temb.float()
            tau = net.temperature()
            pos = temb[torch.tensor([where[c] for c in caps], device=temb.device)]
            loss = coarse_loss(cls, pos, tau)
            if neg_lists is not None:
                k = max(1, max(len(n) for n in neg_lists))
                gather = torch.zeros(len(caps), k, dtype=torch.long)
                mask = torch.zeros(len(caps), k, dtype=torch.bool)
                for i, ns in enumerate(neg_lists):
                    for j, t in enumerate(ns):
                        gather[i, j], mask[i, j] = where[t], True
                neg = temb[gather.to(temb.device)]
                mask = mask.to(temb.device)
                fv = prm.float() if (prm is not None and record.prompt) else cls
                if record.extra == "fine":
                    extra = fine_loss(fv, pos, neg, tau, mask)
                elif record.extra == "label":
                    extra = llm_teacher_label_loss(cls, pos, neg, tau, labels=(~mask).long())
                else:
                    teach = np.zeros((len(caps), 1 + k))
                    from hardneg.generators.llm_teacher import soft_targets

                    for i, (c, ns) in enumerate(zip(caps, neg_lists)):
                        cand = [c] + ns
                        teach[i, : len(cand)] = soft_targets(teacher_emb[c], np.stack([teacher_emb[t] for t in cand]),
                                                             TEACHER_TAU)
                    extra = llm_teacher_logit_loss(cls, pos, neg, torch.tensor(teach, dtype=cls.dtype, device=cls.device),
                                                   tau, mask)
                loss = loss + lam * extra
            value = float(loss.detach())
            if not math.isfinite(value):
                raise TrainingDiverged(f"the loss became {value} at step {step + 1}; stopped before applying it. The "
                                       f"last good state (step {step}) is saved in {out}; lower --lr or check the data")
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            bad = [n for n, p in net.named_parameters() if p.grad is not None and not torch.isfinite(p.grad).all()]
            if bad:
                raise TrainingDiverged(f"gradients of {bad[:3]} became non-finite at step {step + 1}; stopped before "
                                       f"applying them. The last good state (step {step}) is saved in {out}")
            optimizer.step()
            last_loss = value
            log_rows.append({"step": step + 1, "loss": round(value, 6), "tau": round(float(tau.detach()), 6)})
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{value:.3f}")
            done = step + 1
            if rank == 0 and (done % save_every == 0 or done == total):
                # the log first, then the state: a kill between them leaves log rows past the state, which a resume
                # trims (`_trim_log`), never a state whose steps the log lacks
                _append_log(out, log_rows)
                log_rows = []
                _save(out, net, optimizer, done, settings, provenance, "complete" if done == total else "running",
                      last_loss)
        if start >= total and rank == 0:
            _save(out, net, optimizer, total, settings, provenance, "complete", last_loss)
    except TrainingDiverged:
        if rank == 0:
            _save(out, net, optimizer, step, settings, provenance, f"stopped: non-finite loss at step {step + 1}",
                  last_loss)
            _append_log(out, log_rows)
        raise
    finally:
        if bar is not None:
            bar.close()
    timings["steps_s"] = time.perf_counter() - t_steps
    if rank == 0:
        _clean_temporaries(out)
    if world > 1:
        _check_replicas_agree(net)
    _barrier(world)
    return TrainResult(out, total, start, last_loss, provenance, timings)


def _check_replicas_agree(net) -> None:
    """Every DDP process must end with the same weights (else the gradients were not averaged)."""
    import torch
    import torch.distributed as dist

    dev = next(net.parameters()).device
    total = torch.stack([p.detach().double().sum() for p in net.parameters()]).sum().reshape(1)
    got = [torch.zeros(1, dtype=torch.float64, device=dev) for _ in range(dist.get_world_size())]
    dist.all_gather(got, total)
    if len({float(g) for g in got}) != 1:
        raise RuntimeError(f"DDP processes ended with different weights ({[float(g) for g in got]})")

