# %% [markdown]
# # leanindex in a notebook
#
# Search and inspect Lean declarations from Python and get pandas DataFrames. This example
# builds the small sample catalog that ships with leanindex (profile SAMPLE, 76 declarations of
# Lean core) into a temporary folder and queries it in-process with `Client.local`; against a
# running `leanindex serve`, use `Client("http://127.0.0.1:8000")` (plus `token=` when the
# server has one) instead: the methods and answers are the same.

# %%
import tempfile

import pandas as pd

from leanindex import Client
from leanindex.catalog.builder import build_catalog
from leanindex.catalog.stream import iter_lines
from leanindex.sample import sample_stream_path

scratch = tempfile.TemporaryDirectory(prefix="leanindex-notebook-")  # removed by cleanup() below
root = scratch.name
with open(sample_stream_path(), "rb") as stream:
    build_catalog(iter_lines(stream), root, "sample")

client = Client.local(root)
print(client.environments().environments[0].model_dump(include={"environment", "declaration_count", "verified"}))

# %% [markdown]
# One line from a search to a DataFrame: theorems whose name contains `add`.

# %%
theorems = client.search("SAMPLE", "add", kinds=["theorem"], result_limit=50).to_pandas()
print(theorems[["name", "type", "module"]].to_string(index=False))

# %% [markdown]
# Every page of a longer search, following the cursor until the scan is exhausted, and the
# declarations whose type mentions both `List.length` and `HAppend.hAppend`.

# %%
pages = list(client.iter_search("SAMPLE", "a", result_limit=10))
everything = pd.concat([page.to_pandas() for page in pages], ignore_index=True)
print(f"{len(pages)} pages, {len(everything)} declarations, last page {pages[-1].stop_reason.value}")

by_type = client.search("SAMPLE", type_pattern=["List.length", "HAppend.hAppend"]).to_pandas()
print(by_type[["name", "type"]].to_string(index=False))

# %% [markdown]
# Everything the catalog knows about one declaration.

# %%
card = client.inspect("SAMPLE", "Nat.add_comm")
print(card.name, ":", card.type)
print(card.doc)
client.close()
scratch.cleanup()
