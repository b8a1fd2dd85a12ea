"""The network's training record (issue 40): the record inside the net file, training
resumed from a net, the label command's refusal of used seeds, and the shipped
replacing net ``assets/net.bin``."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from blitzaco.nnue import INPUTS, QA, WEIGHT_LIMIT, NetworkError, decode_weights, encode_network, load_network
from blitzaco.tools.tune import cli
from blitzaco.tools.tune.labels import MAGIC, RECORD_BYTES
from blitzaco.tools.tune.record import (
    PRIOR_SEEDS,
    RECORD_VERSION,
    RecordError,
    add_training,
    dumps,
    new_record,
    read_record,
    used_seeds,
    validate,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "labels_sample.bin"


def _record(seed: int = 77) -> dict:
    record = new_record(hidden=4, residual=False, lam=0.75, scale=361.0, held_out=0.02)
    run = {"seed": seed, "nodes": 5000, "stockfish": "Stockfish 15.1", "date": "2026-11-26", "records": 600,
           "fitted": 588, "sha256": "0" * 64}
    training = {"date": "2026-11-26T00:00:00Z", "start": None, "epochs": 1, "history": [
        {"epoch": 1, "train": 0.05, "held_out": 0.04, "seconds": 1.0}]}
    return add_training(record, [run], training)


def _net(meta: dict, hidden: int = 4, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    limit = int(WEIGHT_LIMIT * QA)
    w1 = [rng.randint(-limit, limit) for _ in range(INPUTS * hidden)]
    b1 = [rng.randint(-QA, QA) for _ in range(hidden)]
    w2 = [rng.randint(-3000, 3000) for _ in range(2 * hidden)]
    return encode_network(w1, b1, w2, 1234, hidden=hidden, meta=meta)


def _label_copy(folder: Path, seed: int, extra: bytes = b"") -> Path:
    """The test sample as the output of a label run of *seed* (with its state file)."""
    path = folder / f"labels_s{seed}.bin"
    path.write_bytes(SAMPLE.read_bytes() + extra)
    state = {"seed": seed, "nodes": 300, "games": 9, "positions": 600, "stockfish": "Stockfish 15.1",
             "started": "2026-11-26T01:51:00Z"}
    path.with_name(path.name + ".json").write_text(json.dumps(state))
    return path


def test_the_record_round_trips_through_the_net_file(tmp_path: Path) -> None:
    record = _record()
    assert record["record"] == RECORD_VERSION and record["positions"] == 588
    path = tmp_path / "net.bin"
    path.write_bytes(_net(record))
    assert read_record(path) == record
    assert json.loads(dumps(record)) == record
    assert used_seeds(record) == sorted({77, *(item["seed"] for item in PRIOR_SEEDS)})
    # A second training on a later label run: appended, the old entries kept.
    later = add_training(record, [{"seed": 78, "records": 100, "fitted": 98}], {"start": {"file": "net.bin"}})
    assert [run["seed"] for run in later["label_runs"]] == [77, 78] and len(later["trainings"]) == 2
    assert later["positions"] == 588 + 98 and record["positions"] == 588  # the old record is untouched


def test_a_record_of_another_version_or_malformed_is_refused(tmp_path: Path) -> None:
    record = _record()
    with pytest.raises(RecordError, match="version 2"):
        validate({**record, "record": 2})
    with pytest.raises(RecordError, match="without trainings"):
        validate({key: value for key, value in record.items() if key != "trainings"})
    with pytest.raises(RecordError, match="listed twice"):
        validate({**record, "label_runs": record["label_runs"] * 2})
    path = tmp_path / "old.bin"
    path.write_bytes(_net({"positions": 5}))  # a net from before the record (as assets/nn.bin)
    with pytest.raises(RecordError, match="no training record"):
        read_record(path)
    damaged = bytearray(_net(record))
    damaged[-20] ^= 4  # inside the record: the CRC refuses it
    path.write_bytes(bytes(damaged))
    with pytest.raises(NetworkError, match="checksum"):
        read_record(path)
    with pytest.raises(NetworkError, match="cannot read"):
        read_record(tmp_path / "missing.bin")


def test_a_partial_last_record_is_not_read(tmp_path: Path) -> None:
    from blitzaco.tools.tune.nn import load_arrays

    path = _label_copy(tmp_path, 5, extra=b"\x01" * (RECORD_BYTES - 3))
    assert (path.stat().st_size - len(MAGIC)) % RECORD_BYTES
    assert len(load_arrays(path)) == 600
    assert len(load_arrays(path, start=590)) == 10


def _train(tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(["train-net", *argv])
    return code, capsys.readouterr().err


def test_train_net_writes_output_buckets_and_resumes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``train-net --output-buckets 4``: a version 2 file whose record names its
    buckets; resumed with zero epochs, the same weights bit for bit, buckets kept;
    another bucket count than the start net's is refused."""
    pytest.importorskip("torch")
    data = _label_copy(tmp_path, 104)
    net = tmp_path / "ob.bin"
    code, err = _train(tmp_path, ["--data", str(data), "--hidden", "8", "--output-buckets", "4", "--epochs", "1",
                                  "--batch", "64", "--out", str(net)], capsys)
    assert code == 0, err
    before = decode_weights(net.read_bytes())
    assert before.buckets == 4 and before.meta["net"]["output_buckets"] == 4
    assert before.meta["trainings"][0]["quantisation"]["max_cp"] <= 3
    again = tmp_path / "again.bin"
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--data", str(data), "--epochs", "0",
                                  "--out", str(again)], capsys)
    assert code == 0, err
    after = decode_weights(again.read_bytes())
    assert (after.w1, after.b1, after.w2, after.b2) == (before.w1, before.b1, before.w2, before.b2)
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--data", str(data), "--output-buckets", "8",
                                  "--epochs", "0", "--out", str(tmp_path / "no.bin")], capsys)
    assert code == 2 and "4 output buckets" in err
    code, err = _train(tmp_path, ["--data", str(data), "--output-buckets", "40", "--out", str(tmp_path / "no.bin")],
                       capsys)
    assert code == 2 and "1 to 32" in err


def test_train_net_writes_a_squared_relu_net_and_resumes_it(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``train-net --activation screlu``: the squared flag in the file and its record,
    the engine's score within 3 cp of the float model, the engine names it; resumed
    with zero epochs, the same weights; another activation than the start net's is
    refused; a file with a flag this engine does not know is refused."""
    pytest.importorskip("torch")
    from blitzaco.nnue import FLAG_SQUARED, decode_network

    data = _label_copy(tmp_path, 105)
    net = tmp_path / "sq.bin"
    code, err = _train(tmp_path, ["--data", str(data), "--hidden", "8", "--output-buckets", "2", "--activation",
                                  "screlu", "--epochs", "1", "--batch", "64", "--out", str(net)], capsys)
    assert code == 0, err
    weights = decode_weights(net.read_bytes())
    assert weights.flags & FLAG_SQUARED and "squared" in weights.meta["net"]["activation"]
    assert weights.meta["trainings"][0]["quantisation"]["max_cp"] <= 3
    assert "squared clipped ReLU" in decode_network(net.read_bytes(), "sq.bin").describe()
    again = tmp_path / "again.bin"
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--data", str(data), "--epochs", "0",
                                  "--out", str(again)], capsys)
    assert code == 0, err
    after = decode_weights(again.read_bytes())
    assert (after.w1, after.w2, after.flags) == (weights.w1, weights.w2, weights.flags)
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--data", str(data), "--activation", "crelu",
                                  "--epochs", "0", "--out", str(tmp_path / "no.bin")], capsys)
    assert code == 2 and "activation is screlu" in err
    blob = bytearray(net.read_bytes())
    blob[8 + 10] |= 8  # a flag bit no engine knows (the header's flags word)
    blob[-4:] = (__import__("zlib").crc32(bytes(blob[:-4]))).to_bytes(4, "little")
    with pytest.raises(NetworkError, match="unknown flags"):
        decode_weights(bytes(blob))


def test_train_net_writes_a_mirrored_net_and_resumes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``train-net --mirror``: the mirrored flag in the file and its record, the
    trainer's features (both ways of making them) as the format defines them, the
    engine's score within 3 cp of the float model, the engine names it; resumed, it
    stays mirrored; ``--mirror`` on an unmirrored net is refused."""
    pytest.importorskip("torch")
    import numpy as np

    from blitzaco.nnue import FLAG_MIRRORED, decode_network, feature, flip
    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.nn import board_features, load_arrays

    data = _label_copy(tmp_path, 106)
    arrays = load_arrays(data, 300, mirror=True)
    assert arrays.mirrored and not load_arrays(data, 300).mirrored
    crossed = 0
    for index, label in enumerate(read_labels(data)):
        if index == 300:
            break
        board = label.board
        expected = []
        for perspective in (board.turn, not board.turn):
            king = board.king(perspective)
            assert king is not None
            crossed += flip(king) != 0
            expected.append(sorted(feature(perspective, piece.color, piece.piece_type, square, flip(king))
                                   for square, piece in board.piece_map().items()))
        own, other = board_features(board, mirror=True)
        assert [sorted(f for f in own if f != INPUTS), sorted(f for f in other if f != INPUTS)] == expected
        assert [sorted(int(f) for f in row if f != INPUTS) for row in (arrays.stm[index], arrays.other[index])] \
            == expected
    assert crossed > 20  # kings on both halves were seen
    net = tmp_path / "mirror.bin"
    code, err = _train(tmp_path, ["--data", str(data), "--hidden", "8", "--output-buckets", "2", "--mirror",
                                  "--epochs", "1", "--batch", "64", "--out", str(net)], capsys)
    assert code == 0, err
    weights = decode_weights(net.read_bytes())
    assert weights.flags & FLAG_MIRRORED and "mirrored" in weights.meta["net"]
    assert weights.meta["trainings"][0]["quantisation"]["max_cp"] <= 3
    assert "mirrored by the king's file" in decode_network(net.read_bytes(), "m.bin").describe()
    again = tmp_path / "again.bin"
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--data", str(data), "--epochs", "0",
                                  "--out", str(again)], capsys)
    assert code == 0, err
    after = decode_weights(again.read_bytes())
    assert (after.w1, after.w2, after.flags) == (weights.w1, weights.w2, weights.flags)
    plain = tmp_path / "plain.bin"
    code, err = _train(tmp_path, ["--data", str(data), "--hidden", "8", "--epochs", "0", "--out", str(plain)], capsys)
    assert code == 0, err
    code, err = _train(tmp_path, ["--resume", str(plain), "--replay", "--data", str(data), "--mirror", "--epochs",
                                  "0", "--out", str(tmp_path / "no.bin")], capsys)
    assert code == 2 and "not mirrored" in err
    assert np.any(load_arrays(data, 300, mirror=True).stm != load_arrays(data, 300).stm)


def test_train_net_records_its_data_and_resumes_from_the_given_weights(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A net trained from random weights carries its record (also written beside it);
    resumed with zero epochs it gives back the same weights bit for bit, and its
    record grows by one training that names the start net."""
    pytest.importorskip("torch")
    import hashlib

    first = _label_copy(tmp_path, 101)
    net = tmp_path / "net.bin"
    code, err = _train(tmp_path, ["--data", str(first), "--hidden", "8", "--epochs", "2", "--batch", "64",
                                  "--lr", "0.004", "--out", str(net)], capsys)
    assert code == 0, err
    record = read_record(net)
    assert json.loads(net.with_suffix(".json").read_text()) == record
    (run,) = record["label_runs"]
    assert (run["seed"], run["nodes"], run["records"], run["fitted"]) == (101, 300, 600, 588)
    assert run["stockfish"] == "Stockfish 15.1" and run["date"] == "2026-11-26T01:51:00Z"
    assert run["sha256"] == hashlib.sha256(first.read_bytes()).hexdigest()
    (training,) = record["trainings"]
    assert training["start"] is None and training["data"][0]["held_out"] == [588, 600]
    assert [row["epoch"] for row in training["history"]] == [1, 2]
    assert training["optimiser"]["lr"] == 0.004 and training["optimiser"]["name"] == "Adam"
    loss = training["held_out_loss"]
    assert loss["best"] <= loss["start"] and loss["classical"] > 0 and loss["engine"] > 0
    assert loss["engine_checked_on"] == 12  # all the held-out positions
    assert record["net"]["hidden"] == 8 and not record["net"]["residual"] and record["positions"] == 588
    assert training["quantisation"]["positions"] == 12 and training["quantisation"]["max_cp"] <= 3

    # Resumed on the same data without --replay: refused (the seed is in the record).
    again = tmp_path / "again.bin"
    code, err = _train(tmp_path, ["--resume", str(net), "--data", str(first), "--epochs", "0", "--out",
                                  str(again)], capsys)
    assert code == 2 and "seed 101" in err and not again.exists()
    # With --replay and zero epochs: the same weights, bit for bit (the engine's
    # checks on the first 5 held-out positions only).
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--data", str(first), "--epochs", "0",
                                  "--check-positions", "5", "--out", str(again)], capsys)
    assert code == 0, err
    before, after = decode_weights(net.read_bytes()), decode_weights(again.read_bytes())
    assert (after.w1, after.b1, after.w2, after.b2, after.hidden) == (before.w1, before.b1, before.w2, before.b2, 8)
    grown = after.meta
    assert len(grown["trainings"]) == 2 and grown["trainings"][0] == record["trainings"][0]
    assert grown["trainings"][1]["start"]["sha256"] == hashlib.sha256(net.read_bytes()).hexdigest()
    assert grown["trainings"][1]["optimiser"]["lr"] == 0.004  # resumed: the last training's rate
    assert "101 again" in grown["trainings"][1]["replay"]
    assert grown["trainings"][1]["held_out_loss"]["engine_checked_on"] == 5

    # Resumed on a new label run: trained from the start weights (its held-out loss at
    # the start is the start net's), the new run appended.
    second = _label_copy(tmp_path, 102)
    third = tmp_path / "third.bin"
    code, err = _train(tmp_path, ["--resume", str(again), "--data", str(second), "--limit", "300", "--epochs", "1",
                                  "--batch", "64", "--out", str(third)], capsys)
    assert code == 0, err
    grown = read_record(third)
    assert [run["seed"] for run in grown["label_runs"]] == [101, 102] and grown["positions"] == 588 + 294
    assert grown["label_runs"][1]["records"] == 300 and grown["trainings"][2]["data"][0]["held_out"] == [294, 300]
    assert grown["trainings"][2]["quantisation"]["positions"] == 6  # the held-out ones, none beyond
    # Records 294-299 of the sample: the start net's loss on them, not a random net's.
    start = decode_weights(again.read_bytes())
    from blitzaco.tools.tune.nn import TrainSettings, load_arrays, train

    _, summary = train(load_arrays(SAMPLE, 6, start=294), TrainSettings(hidden=8, epochs=0), held=6, start=start,
                       log=lambda _: None)
    assert grown["trainings"][2]["held_out_loss"]["start"] == pytest.approx(summary["held_out_loss_start"], rel=1e-6)


def test_train_net_widens_a_net_without_changing_what_it_says(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``--resume NET --hidden MORE``: NET's neurons are kept and the new ones start
    with output weights of zero, so with zero epochs the widened net scores every
    position as NET does, in the trainer (the same held-out loss at the start) and in
    the engine (the same integers); the record says it was widened and by what rule;
    trained on, the new neurons get a say."""
    pytest.importorskip("torch")
    from blitzaco.board import Board
    from blitzaco.config import EvalConfig
    from blitzaco.network import NetEvaluator
    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.record import WIDENED_RULE

    data = _label_copy(tmp_path, 107)
    net = tmp_path / "narrow.bin"
    code, err = _train(tmp_path, ["--data", str(data), "--hidden", "8", "--output-buckets", "2", "--activation",
                                  "screlu", "--mirror", "--epochs", "1", "--batch", "64", "--out", str(net)], capsys)
    assert code == 0, err
    wide = tmp_path / "wide.bin"
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--hidden", "16", "--data", str(data),
                                  "--epochs", "0", "--out", str(wide)], capsys)
    assert code == 0, err
    before, after = decode_weights(net.read_bytes()), decode_weights(wide.read_bytes())
    assert (after.hidden, after.buckets, after.flags, after.b2) == (16, 2, before.flags, before.b2)
    assert after.meta["net"]["hidden"] == 16 and before.meta["net"]["hidden"] == 8
    training = after.meta["trainings"][-1]
    assert training["widened"] == {"from": 8, "to": 16, "rule": WIDENED_RULE}
    assert "widened" not in after.meta["trainings"][0]
    same = tmp_path / "same.bin"  # resumed at its own width: the quantised start net's loss
    code, err = _train(tmp_path, ["--resume", str(net), "--replay", "--data", str(data), "--epochs", "0",
                                  "--out", str(same)], capsys)
    assert code == 0, err
    assert training["held_out_loss"]["start"] == pytest.approx(
        read_record(same)["trainings"][-1]["held_out_loss"]["start"], rel=1e-6)
    for bucket in range(2):  # each half of each bucket: the old weights, then zeros
        for half in range(2):
            at = (2 * bucket + half) * 16
            old_at = (2 * bucket + half) * 8
            assert after.w2[at:at + 16] == before.w2[old_at:old_at + 8] + (0,) * 8
    assert any(after.w1[i * 16 + 8:i * 16 + 16] != (0,) * 8 for i in range(INPUTS))  # the new neurons hear
    narrow_net, wide_net = NetEvaluator(EvalConfig(), before), NetEvaluator(EvalConfig(), after)
    scores = []
    for index, label in enumerate(read_labels(data)):
        if index == 200:
            break
        board = Board.from_chess(label.board)
        narrow_net.reset(board)
        wide_net.reset(board)
        scores.append((int(narrow_net.network(board)), int(wide_net.network(board))))
    assert all(a == b for a, b in scores) and len({a for a, _ in scores}) > 20
    trained = tmp_path / "trained.bin"  # the streamed trainer widens the same way
    code, err = _train(tmp_path, ["--resume", str(wide), "--replay", "--hidden", "24", "--stream", "--data",
                                  str(data), "--epochs", "1", "--batch", "64", "--out", str(trained)], capsys)
    assert code == 0, err
    grown = decode_weights(trained.read_bytes())
    assert grown.hidden == 24 and grown.meta["trainings"][-1]["widened"]["from"] == 16
    assert any(grown.w2[16:24]) and [training.get("widened", {}).get("to") for training in grown.meta["trainings"]] \
        == [None, 16, 24]


def test_a_replacing_net_of_128_quantises_within_3_cp_of_the_trainer() -> None:
    """The shipped shape (768x2->128x2->1, not residual): the engine's integer output
    is within 3 centipawns of the trainer's float output on the sample's positions."""
    pytest.importorskip("torch")
    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.nn import TrainSettings, load_arrays, quantisation_error, quantise, train

    model, _ = train(load_arrays(SAMPLE), TrainSettings(hidden=128, epochs=3, batch=64, lr=5e-3), log=lambda _: None)
    boards = [record.board for record in read_labels(SAMPLE)][:300]
    error = quantisation_error(model, quantise(model), boards)
    assert error["positions"] == 300 and 0 < error["max_cp"] <= 3.0, error


def test_train_net_refuses_a_start_net_it_cannot_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    data = _label_copy(tmp_path, 103)
    out = tmp_path / "out.bin"
    damaged = tmp_path / "damaged.bin"
    blob = bytearray(_net(_record(), hidden=8))
    blob[200] ^= 1
    damaged.write_bytes(bytes(blob))
    old = tmp_path / "old.bin"
    old.write_bytes(_net({"positions": 5}))
    for start, reason in ((damaged, "checksum"), (tmp_path / "missing.bin", "cannot read"),
                          (old, "no training record")):
        code, err = _train(tmp_path, ["--resume", str(start), "--data", str(data), "--epochs", "0", "--out",
                                      str(out)], capsys)
        assert code == 2 and reason in err, err
    good = tmp_path / "good.bin"
    good.write_bytes(_net(_record() | {"net": {**_record()["net"], "hidden": 8}}, hidden=8))
    code, err = _train(tmp_path, ["--resume", str(good), "--hidden", "4", "--data", str(data), "--out", str(out)],
                       capsys)
    assert code == 2 and "8 hidden" in err and "not narrowed" in err
    unknown = tmp_path / "unknown.bin"  # a label file whose run (seed) is unknown cannot enter a record
    shutil.copy(SAMPLE, unknown)
    code, err = _train(tmp_path, ["--data", str(unknown), "--epochs", "0", "--out", str(out)], capsys)
    assert code == 2 and "seed and nodes are unknown" in err
    assert not out.exists()


def test_label_refuses_a_seed_the_record_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``tune.py label`` prints the used seeds and refuses one of them (no Stockfish
    is started) unless --force; a new seed goes on to label."""
    import blitzaco.tools.tune.labelrun as labelrun

    started: list[int] = []

    def fake_run(out: str, positions: int, settings: labelrun.RunSettings, **_: object) -> dict[str, object]:
        started.append(settings.seed)
        return {"positions": 0, "batches": 0, "seconds": 1, "per_hour": 0, "retried": 0, "workers": {}, "done": 0}

    monkeypatch.setattr(labelrun, "run", fake_run)
    net = tmp_path / "net.bin"
    net.write_bytes(_net(_record(seed=77)))
    base = ["label", "--record", str(net), "--positions", "10", "--out", str(tmp_path / "l.bin")]
    for seed in (77, 1, 11, 15):
        assert cli.main([*base, "--seed", str(seed)]) == 2
        err = capsys.readouterr().err
        assert "seeds already used" in err and "1, 11, 15, 77" in err and f"seed {seed} was used" in err
    assert started == []
    assert cli.main([*base, "--seed", "77", "--force"]) == 0
    assert "WARNING" in capsys.readouterr().err
    assert cli.main([*base, "--seed", "78"]) == 0
    assert started == [77, 78]
    # A record that cannot be read stops the run rather than letting any seed through.
    (tmp_path / "bad.bin").write_bytes(b"junk")
    assert cli.main(["label", "--record", str(tmp_path / "bad.bin"), "--seed", "99", "--out", "x.bin"]) == 2
    assert started == [77, 78]


def test_the_label_state_file_names_stockfish_and_the_start(tmp_path: Path) -> None:
    from blitzaco.tools.tune.labels import find_stockfish, generate

    if find_stockfish() is None:
        pytest.skip("Stockfish labels the positions")
    out = tmp_path / "l.bin"
    generate(out, 3, seed=3, nodes=200, workers=1, progress=False)
    state = json.loads(out.with_name("l.bin.json").read_text())
    assert state["stockfish"].startswith("Stockfish") and state["started"].startswith("20")
    assert (state["seed"], state["nodes"]) == (3, 200)


def test_the_shipped_replacing_net_carries_its_record_and_is_off() -> None:
    """``assets/net.bin``: a replacing net of at least 64 neurons a side, its record
    inside it (and the same beside it in ``assets/net.json``), off by default."""
    from blitzaco.bundled import bundled_file
    from blitzaco.config import Config

    path = bundled_file("net.bin")
    if path is None:
        pytest.skip("no replacing net shipped yet")
    net = load_network(path)
    assert not net.residual and net.hidden >= 64
    record = read_record(path)
    assert record["net"]["hidden"] == net.hidden and record["trainings"]
    assert {23, 27, 31, 32} <= {run["seed"] for run in record["label_runs"]}  # the search labels, seeds 31 and 32
    assert record["positions"] == net.meta["positions"] > 100_000
    sidecar = ROOT / "assets" / "net.json"
    assert json.loads(sidecar.read_text()) == record
    nn = Config().eval.nn  # the default since it won its decision match: this net alone
    assert nn.enabled and nn.file == "net.bin" and (nn.weight, nn.classical) == (1.0, 0.0)
    damaged = bytearray(path.read_bytes())
    damaged[len(damaged) // 2] ^= 1
    with pytest.raises(NetworkError, match="checksum"):
        decode_weights(bytes(damaged))


def test_a_static_label_run_is_recorded_as_such(tmp_path: Path) -> None:
    """A run labelled by Stockfish's static evaluation says so in the record, with
    its shares of random moves and Chess960 games; a search label run's entry has no
    such keys."""
    from blitzaco.tools.tune.record import label_run

    search = _label_copy(tmp_path, 81)
    static = _label_copy(tmp_path, 82)
    state_path = static.with_name(static.name + ".json")
    state = json.loads(state_path.read_text())
    state.update(label="static", random_moves=0.05, chess960=0.1)
    state_path.write_text(json.dumps(state))
    entry = label_run(static, 600)
    assert (entry["label"], entry["random_moves"], entry["chess960"]) == ("static", 0.05, 0.1)
    assert not {"label", "random_moves", "chess960"} & label_run(search, 600).keys()
