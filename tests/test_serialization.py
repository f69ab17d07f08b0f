"""tinyattn.save / tinyattn.load: round trips of checkpoints, and refusal of anything that would need pickle."""
import io
import json
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn import optim


def round_trip(obj, tmp_path, name="ckpt.pt"):
    path = tmp_path / name
    tinyattn.save(obj, path)
    return tinyattn.load(path)


def test_a_training_checkpoint_round_trips(tmp_path):
    tinyattn.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95))
    model(tinyattn.randn(5, 3)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "iter_num": 7,
            "best_val_loss": tinyattn.tensor(1.25), "config": {"dropout": 0.0, "bias": False, "name": "x", "z": None}}
    back = round_trip(ckpt, tmp_path)
    assert isinstance(back["model"], OrderedDict) and list(back["model"]) == list(ckpt["model"])
    for k, v in ckpt["model"].items():
        assert back["model"][k].dtype == v.dtype and np.array_equal(back["model"][k], v)
    assert back["iter_num"] == 7 and back["config"] == ckpt["config"]
    assert isinstance(back["best_val_loss"], tinyattn.Tensor) and back["best_val_loss"].item() == 1.25
    groups = back["optimizer"]["param_groups"]
    assert groups[0]["betas"] == (0.9, 0.95) and groups[0]["params"] == [0, 1, 2, 3]  # a tuple stays a tuple
    assert sorted(back["optimizer"]["state"]) == [0, 1, 2, 3]  # int keys stay ints
    model2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model2.load_state_dict(back["model"])
    opt2 = optim.AdamW(model2.parameters())
    opt2.load_state_dict(back["optimizer"])
    assert opt2.param_groups[0]["lr"] == 1e-2 and opt2.state[model2[0].weight]["step"] == 1


def test_tensors_keep_dtype_grad_flag_and_identity(tmp_path):
    p = nn.Parameter(np.arange(6, dtype=np.float64).reshape(2, 3))
    t = tinyattn.tensor([1, 2, 3])
    back = round_trip([p, t, (p, np.float32(2.5), np.int64(3)), np.array([True, False])], tmp_path)
    assert isinstance(back[0], nn.Parameter) and back[0].requires_grad and back[0].dtype == np.float64
    assert back[1].dtype == np.int64 and not back[1].requires_grad and back[1].tolist() == [1, 2, 3]
    assert back[2][0] is back[0]  # stored once, one object again
    assert type(back[2][1]) is np.float32 and back[2][1] == 2.5 and type(back[2][2]) is np.int64
    assert back[3].dtype == bool and back[3].tolist() == [True, False]


def test_file_objects_and_special_floats(tmp_path):
    buf = io.BytesIO()
    tinyattn.save({"inf": float("inf"), "nan": float("nan"), 3: "three", "t": tinyattn.zeros(0)}, buf)
    buf.seek(0)
    back = tinyattn.load(buf, map_location="cpu", weights_only=True)
    assert back["inf"] == float("inf") and back["nan"] != back["nan"] and back[3] == "three"
    assert back["t"].shape == (0,)


def test_the_file_is_a_zip_of_json_and_npy_without_pickle(tmp_path):
    path = tmp_path / "m.pt"
    tinyattn.save({"w": tinyattn.ones(2, 2)}, path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["arrays/0.npy", "manifest.json"]
        manifest = json.loads(z.read("manifest.json"))
        arr = np.load(io.BytesIO(z.read("arrays/0.npy")), allow_pickle=False)
    assert manifest["format"] == "tinyattn.save/1" and arr.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def _local_module():
    class Local(nn.Module):  # defined in a function: no top-level name to rebuild it by
        pass
    return Local()


@pytest.mark.parametrize("obj,match", [
    ({"fn": lambda x: x}, r"obj\['fn'\] is a function, which tinyattn.save can not store"),
    ([1, {"m": _local_module()}], r"obj\[1\]\['m'\] is a Local.*save a Module as model.state_dict\(\)"),
    ({(1, 2): 3}, r"has a key \(1, 2\) of type tuple; dict keys must be str or int"),
    (np.array([object()]), r"obj is an array of dtype object, which can not be stored without pickle"),
    ({1.5j}, r"obj is a set"),
])
def test_what_would_need_pickle_is_refused(obj, match, tmp_path):
    with pytest.raises(TypeError, match=match):
        tinyattn.save(obj, tmp_path / "x.pt")


def test_load_refuses_pickles_and_foreign_or_damaged_files(tmp_path):
    pkl = tmp_path / "a.pkl"
    pkl.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueError, match="not a file written by tinyattn.save \\(not a zip archive\\)"):
        tinyattn.load(pkl)
    torchlike = tmp_path / "t.pt"
    with zipfile.ZipFile(torchlike, "w") as z:  # the layout torch.save writes: a pickle inside a zip
        z.writestr("archive/data.pkl", pickle.dumps({"a": 1}))
    with pytest.raises(ValueError, match="no manifest.json\\). It looks like a torch.save file"):
        tinyattn.load(torchlike)
    bad = tmp_path / "b.pt"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "tinyattn.save/1", "arrays": 1,
                                                "root": {"type": "ndarray", "array": 0}}))
    with pytest.raises(ValueError, match="damaged \\(arrays listed in the manifest are missing\\)"):
        tinyattn.load(bad)
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "tinyattn.save/1", "arrays": 0,
                                                "root": {"type": "pickle", "data": "..."}}))
    with pytest.raises(ValueError, match="damaged \\(unknown entry"):
        tinyattn.load(bad)
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "other/9"}))
    with pytest.raises(ValueError, match="has format 'other/9'"):
        tinyattn.load(bad)


def test_an_object_array_hidden_in_an_npy_is_not_unpickled(tmp_path):
    path = tmp_path / "evil.pt"
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)  # an .npy that holds a pickle
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "tinyattn.save/1", "arrays": 1,
                                                "root": {"type": "ndarray", "array": 0}}))
        z.writestr("arrays/0.npy", buf.getvalue())
    with pytest.raises(ValueError, match="allow_pickle"):  # NumPy's refusal: nothing was unpickled
        tinyattn.load(path)


def test_map_location_naming_a_gpu_gets_pytorchs_error(tmp_path):
    path = tmp_path / "c.pt"
    tinyattn.save([1], path)
    assert tinyattn.load(path, map_location=tinyattn.device("cpu")) == [1]
    assert tinyattn.load(path, map_location={"cuda:0": "cpu"}) == [1]
    assert tinyattn.load(path, map_location=lambda storage, loc: storage) == [1]
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        tinyattn.load(path, map_location="cuda")
