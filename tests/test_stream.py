"""The streamed trainer (``train-net --stream``, :mod:`blitzaco.tools.tune.stream`):
files read a group of chunks at a time, a run stopped and resumed from its
checkpoint ends with the weights of a run straight through, a checkpoint of another
training refused, and the command writes a net the engine reads with its record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from blitzaco.nnue import decode_weights  # noqa: E402
from blitzaco.tools.tune import cli  # noqa: E402
from blitzaco.tools.tune.labels import MAGIC, RECORD_BYTES  # noqa: E402
from blitzaco.tools.tune.nn import TrainSettings, held_out_count, load_arrays  # noqa: E402
from blitzaco.tools.tune.stream import Source, StreamSettings, train_stream  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "labels_sample.bin"
G2 = ROOT / "tests" / "data" / "labels_s3_n300_g2.bin"
SETTINGS = TrainSettings(hidden=8, epochs=3, batch=32, lr=5e-3, seed=4, output_buckets=2, device="cpu")
STREAM = StreamSettings(chunk=50, group=3, checkpoint_seconds=1e9)


def _sources() -> list[Source]:
    sources = []
    for path in (SAMPLE, G2):
        count = (path.stat().st_size - len(MAGIC)) // RECORD_BYTES
        sources.append(Source(str(path), count, held_out_count(count, 0.05)))
    return sources


def _weights(model: object) -> dict[str, object]:
    return {key: value.clone() for key, value in model.state_dict().items()}  # type: ignore[attr-defined]


def test_a_streamed_run_stopped_and_resumed_ends_as_one_run_straight_through(tmp_path: Path) -> None:
    """Stopped after every group (a checkpoint each time) and resumed by the same
    call until it is done: the same best epoch, history and weights, bit for bit, as
    one run straight through; the held-out loss falls from the start."""
    straight, summary = train_stream(_sources(), SETTINGS, STREAM, checkpoint=tmp_path / "straight.ckpt",
                                     log=lambda line: None)
    assert summary["finished"] and summary["epochs_run"] == 3
    assert summary["held_out_loss"] < summary["held_out_loss_start"]
    checkpoint = tmp_path / "stopped.ckpt"
    stops = 0
    while True:
        model, resumed = train_stream(_sources(), TrainSettings(**{**SETTINGS.__dict__, "max_seconds": 1e-9}),
                                      STREAM, checkpoint=checkpoint, log=lambda line: None)
        if resumed["finished"]:
            break
        stops += 1
        assert stops < 100
    groups_per_epoch = -(-sum(-(-source.fitted // STREAM.chunk) for source in _sources()) // STREAM.group)
    assert stops == 3 * groups_per_epoch, "each call plays one group; the last only ends the last epoch"
    assert [h[:3] for h in resumed["history"]] == [h[:3] for h in summary["history"]]  # not the seconds
    assert resumed["best_epoch"] == summary["best_epoch"]
    for key, value in _weights(straight).items():
        assert torch.equal(value, _weights(model)[key]), key


@pytest.mark.parametrize("mirror", [False, True])
def test_the_streamed_positions_are_the_files_fitted_records_each_once_an_epoch(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch,
                                                                              mirror: bool) -> None:
    """An epoch trains on every fitted record of every file once (the features
    ``load_arrays`` makes of them, mirrored by the king's file or not), never a
    held-out one; the order differs between epochs; a checkpoint of other settings
    is refused."""
    from blitzaco.tools.tune import stream

    seen: list[object] = []
    real = stream._arrays

    def recording(records: object, settings: TrainSettings) -> dict[str, object]:
        arrays = real(records, settings)  # type: ignore[arg-type]
        seen.append(arrays)
        return arrays  # type: ignore[return-value]

    monkeypatch.setattr(stream, "_arrays", recording)
    sources = _sources()
    settings = TrainSettings(**{**SETTINGS.__dict__, "epochs": 2, "mirror": mirror})
    train_stream(sources, settings, STREAM, checkpoint=tmp_path / "a.ckpt", log=lambda line: None)
    import numpy as np

    fitted = np.concatenate([load_arrays(source.path, source.fitted, mirror=mirror).stm for source in sources])
    held = np.concatenate([load_arrays(source.path, source.records, start=source.fitted, mirror=mirror).stm
                           for source in sources])
    chunks_per_epoch = sum(-(-source.fitted // STREAM.chunk) for source in sources)
    held_chunks = sum(-(-source.held // STREAM.chunk) for source in sources)
    # The held-out chunks before the first epoch and after each; the fitted ones between.
    assert len(seen) == held_chunks + 2 * (chunks_per_epoch + held_chunks)
    epochs = [seen[held_chunks: held_chunks + chunks_per_epoch],
              seen[2 * held_chunks + chunks_per_epoch: 2 * held_chunks + 2 * chunks_per_epoch]]

    def rows(arrays: np.ndarray) -> list[bytes]:
        return sorted(row.tobytes() for row in arrays)

    for epoch in epochs:
        assert rows(np.concatenate([part["stm"] for part in epoch])) == rows(fitted)  # type: ignore[index]
    first_order = [part["stm"][0].tobytes() for part in epochs[0]]  # type: ignore[index]
    assert first_order != [part["stm"][0].tobytes() for part in epochs[1]]  # type: ignore[index]
    assert not set(rows(held)) <= set(rows(fitted)) or len(held) == 0
    with pytest.raises(ValueError, match="another training"):
        train_stream(sources, TrainSettings(**{**settings.__dict__, "lr": 1e-3}), STREAM,
                     checkpoint=tmp_path / "a.ckpt", log=lambda line: None)


def test_train_net_stream_writes_a_net_with_its_record_and_resumes(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``train-net --stream``: a first call out of time writes no net and says so; the
    same command resumes from the checkpoint and writes a net the engine reads, its
    record saying it was streamed, its quantisation within 3 cp."""
    data = tmp_path / "labels_s104.bin"
    data.write_bytes(SAMPLE.read_bytes())
    data.with_name(data.name + ".json").write_text(json.dumps(
        {"seed": 104, "nodes": 300, "games": 9, "positions": 600, "stockfish": "Stockfish 15.1",
         "started": "2026-11-26T01:51:00Z"}))
    net = tmp_path / "net.bin"
    argv = ["train-net", "--stream", "--data", str(data), "--hidden", "8", "--output-buckets", "2", "--epochs", "2",
            "--batch", "64", "--chunk", "100", "--group", "2", "--check-positions", "50", "--out", str(net)]
    assert cli.main([*argv, "--max-minutes", "1e-9"]) == 0
    assert "nothing written" in capsys.readouterr().err and not net.exists()
    assert Path(f"{net}.ckpt").is_file()
    assert cli.main(argv) == 0, capsys.readouterr().err
    weights = decode_weights(net.read_bytes())
    training = weights.meta["trainings"][-1]
    assert training["streamed"] == {"chunk": 100, "group": 2, "checkpoint_seconds": 1800.0}
    assert training["quantisation"]["max_cp"] <= 3 and weights.buckets == 2
