"""Tier 1, in-process: an embedded GGUF model scores a fixed answer through the llama.cpp
low-level API.

One evaluation per prompt: the chat-formatted prompt (the model's own chat template, with the
generation prompt) followed by the answer's tokens; logits are requested only at the positions
that predict an answer token, and the KV cache keeps the longest common token prefix with the
previous evaluation, so an ablation of source *i* re-evaluates only from source *i* on.
:meth:`LlamaScorer.score_many` orders the prompts by their tokens so that neighbours share
the longest prefixes.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from groundtrace.analyzer.errors import BackendUnavailableError, ConfigError, MissingExtraError

from ._scorer import Tier

__all__ = ["LlamaScorer", "common_prefix"]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class LlamaScorer:
    """Answer log-probabilities from a GGUF model loaded in this process.

    Args:
        model_path: the GGUF file (e.g. ``assemble_model(MODELS[DEFAULT_MODEL])``).
        model: the model's identity in cache keys (default: the file name).
        n_ctx: context length in tokens.
        n_threads: CPU threads.
        n_batch: tokens per decode call.
        reuse: keep the common prefix in the KV cache (False: every prompt is evaluated
            from its first token, the reference the reuse is checked against).

    Attributes:
        evaluated: tokens decoded so far (what the reuse saved is ``total - evaluated``).
        total: tokens of every prompt scored, answer included.

    Raises:
        MissingExtraError: llama-cpp-python is not installed.
        BackendUnavailableError: the model cannot be loaded.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        model: str | None = None,
        n_ctx: int = 4096,
        n_threads: int = 1,
        n_batch: int = 512,
        reuse: bool = True,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingExtraError("llm", "llama_cpp")
        import llama_cpp
        from llama_cpp import _internals
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.model = model or Path(model_path).name
        self.reuse = reuse
        self.evaluated = 0
        self.total = 0
        try:
            self._llm: Any = llama_cpp.Llama(
                model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads,
                n_threads_batch=n_threads, n_batch=n_batch, logits_all=False, verbose=False,
            )  # fmt: skip
        except (ValueError, RuntimeError, OSError) as exc:
            raise BackendUnavailableError(f"cannot load the model {model_path}: {exc}") from exc
        llm = self._llm
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise BackendUnavailableError(f"the model {model_path} has no chat template")
        self._format: Any = Jinja2ChatFormatter(
            template=template,
            eos_token=self._piece(llm.token_eos()),
            bos_token=self._piece(llm.token_bos()),
            add_generation_prompt=True,
        )
        self._n_batch = n_batch
        self._n_ctx = n_ctx
        self._n_vocab = int(llm.n_vocab())
        self._batch: Any = _internals.LlamaBatch(n_tokens=n_batch, embd=0, n_seq_max=1)
        self._cached: list[int] = []  # tokens whose KV entries are in the cache

    @property
    def tier(self) -> Tier:
        """``in-process``."""
        return "in-process"

    def _piece(self, token: int) -> str:
        if token < 0:
            return ""
        return bytes(self._llm.detokenize([token], special=True)).decode("utf-8", "replace")

    def prompt_text(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """The chat-formatted prompt the model reads before the answer."""
        return str(self._format(messages=list(messages)).prompt)

    def tokens(
        self, messages: Sequence[Mapping[str, Any]], answer: str, prefix: str = ""
    ) -> tuple[list[int], int]:
        """The tokens of the prompt (with the reply's ``prefix``) and of the answer, and
        where the answer starts."""
        text = self.prompt_text(messages) + prefix
        prompt = list(self._llm.tokenize(text.encode(), True, True))
        scored = list(self._llm.tokenize(answer.encode(), False, False))
        if not scored:
            raise ConfigError("the answer to attribute has no tokens", field="answer")
        if not prompt:
            raise ConfigError("the prompt has no tokens", field="messages")
        whole = prompt + scored
        if len(whole) > self._n_ctx:
            raise ConfigError(
                f"prompt and answer take {len(whole)} tokens, more than n_ctx={self._n_ctx}",
                field="n_ctx",
            )
        return whole, len(prompt)

    def score_many(
        self, prompts: Sequence[Sequence[Mapping[str, Any]]], answer: str, prefix: str = ""
    ) -> list[list[float]]:
        """Per-token log-probabilities of ``answer`` after each prompt and ``prefix``, in
        the given order (evaluated in token order, so neighbours share the longest prefixes)."""
        encoded = [self.tokens(p, answer, prefix) for p in prompts]
        order = sorted(range(len(encoded)), key=lambda i: encoded[i][0])
        out: dict[int, list[float]] = {}
        for i in order:
            out[i] = self.score_tokens(*encoded[i])
        return [out[i] for i in range(len(encoded))]

    def score_tokens(self, tokens: Sequence[int], first: int) -> list[float]:
        """Log-probabilities of ``tokens[first:]``, each given the tokens before it."""
        ctx = self._llm._ctx
        keep = common_prefix(self._cached, tokens) if self.reuse else 0
        keep = min(keep, first - 1)  # the logits at first - 1 must be computed
        ctx.kv_cache_seq_rm(-1, keep, -1)
        self._cached = list(tokens[:keep])
        wanted = range(first - 1, len(tokens) - 1)  # positions whose logits predict the answer
        out: list[float] = []
        batch = self._batch.batch
        for start in range(keep, len(tokens), self._n_batch):
            chunk = tokens[start : start + self._n_batch]
            outputs: list[int] = []
            for j, token in enumerate(chunk):
                pos = start + j
                batch.token[j] = token
                batch.pos[j] = pos
                batch.seq_id[j][0] = 0
                batch.n_seq_id[j] = 1
                flag = pos in wanted
                batch.logits[j] = flag
                if flag:
                    outputs.append(j)
            batch.n_tokens = len(chunk)
            ctx.decode(self._batch)
            self._cached.extend(chunk)
            for j in outputs:
                row = np.ctypeslib.as_array(ctx.get_logits_ith(j), shape=(self._n_vocab,))
                logits = row.astype(np.float64)
                top = logits.max()
                lse = top + np.log(np.exp(logits - top).sum())
                out.append(float(logits[tokens[start + j + 1]] - lse))
        self.evaluated += len(tokens) - keep
        self.total += len(tokens)
        return out

    def close(self) -> None:
        """Free the model and its context."""
        self._batch = None
        self._llm.close()
