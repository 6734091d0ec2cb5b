"""One head's queries and keys as points in one plane (AttentionViz, Yeh et al. 2023).

A head compares query t with key s by the dot product score_ts = scale · q_t · k_s. Drawn in one space, a query
should land near the keys it attends to. Three changes that leave every attention weight as it is make that picture
fairer, as AttentionViz does:
1. both sides are multiplied by √scale, so that a_t · b_s is the score itself;
2. queries are multiplied by c and keys by 1/c (every product stays), with c chosen so that both clouds have the same
   spread; otherwise the larger cloud alone decides the plane;
3. all keys are moved by one vector, so that their centre is the queries' centre: that adds a_t · shift to every
   score of query t, the same number for all its keys, and softmax ignores it.
The plane is then the two directions along which the points spread most (principal component analysis), through
their common centre. `explained` is the share of the spread (the squared distances from the centre, added up) that
the plane keeps.

Two ways to read the plane, both approximations of the dot product:
- distance (AttentionViz's reading): in the full space |a_t − b_s|² = |a_t|² + |b_s|² − 2 a_t · b_s, so for one query
  the nearest key has the highest score only when all keys have the same length; and the score part that every
  query shares (all queries like the same key) moves no key nearer to anyone. The plane adds its own error.
- the arrow from the origin: score order = the order of the keys along the arrow from `origin` (where the space's
  zero lands in the plane) to the query, exactly in the full space and up to the parts outside the plane here
  (a_t · b_s = (a_t − 0) · b_s, and a key's projection on the arrow is that product over the arrow's length).
`order_kept` measures how often each reading orders a query's keys like the true scores.

The claim behind `explained`, stated so that it can fail: map a point back from the plane (`lift`), and the dot
product of a lifted query and a lifted key differs from the true one (beyond one number per query row, which
softmax ignores) by exactly  ε_ts = (a_t − P a_t) · r_s,  where P projects onto the plane's directions and
r_s = b_s − lift(b_s) is the key's part outside the plane. So, by Cauchy-Schwarz, a pair of keys s, s' whose scores
differ by more than |a_t − P a_t| · |r_s − r_s'| keeps its order in the plane; and the parts outside the plane,
added up in squares over all queries and keys, are exactly (1 − explained) of the spread: at explained = 1 every
query keeps the order of all its keys. A plane that kept less than it claims would swap such a pair, or leave more
outside. Nothing stronger holds in general: a head can keep 90 % of its spread and still order one query's keys
badly, when that query reads them along a direction of little spread.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..attention.config import ConfigError
from ..attention.trace import Trace

METHODS = ("pca",)
ORDER_BY = ("dot", "distance")


@dataclass(frozen=True, eq=False)
class QKPlane:
    """One head's n queries and m keys in a plane; see the module's docstring for what the plane keeps.

    Points are in the space of the head's d_k dimensions after the three changes that keep every weight
    (query_points a_t, key_points b_s); their plane coordinates are queries (n, 2) and keys (m, 2).
    """

    head: int                       # the query head i (0-based)
    kv_head: int                    # the key/value head it reads: i // group_size
    method: str
    queries: np.ndarray             # (n, 2) each query's coordinates in the plane
    keys: np.ndarray                # (m, 2) each key's coordinates (after RoPE, when the model turns them)
    keys_before_rope: np.ndarray | None  # (m, 2) the same keys before the rotary turn, or None without RoPE
    explained: float                # the share of the spread the plane keeps, 0..1
    explained_axes: np.ndarray      # (2,) the share each of the two directions keeps
    axes: np.ndarray                # (2, d_k) the plane's directions, orthonormal (a zero row when d_k = 1)
    centre: np.ndarray              # (d_k,) the common centre of queries and keys
    query_points: np.ndarray        # (n, d_k) a_t = c √scale q_t
    key_points: np.ndarray          # (m, d_k) b_s = √scale k_s / c + shift
    query_factor: float             # c √scale
    key_factor: float               # √scale / c
    key_shift: np.ndarray           # (d_k,) the vector added to every key
    scores: np.ndarray              # (n, m) the head's scaled scores, before the mask
    weights: np.ndarray             # (n, m) the head's attention weights
    mask: np.ndarray | None         # (n, m) True = blocked, or None

    @property
    def origin(self) -> np.ndarray:
        """(2,): where the zero of the head's space lands in the plane; the arrow from here to a query is the
        direction along which its keys' scores grow."""
        return -self.axes @ self.centre

    def lift(self, coordinates: np.ndarray) -> np.ndarray:
        """Points of the plane (p, 2) mapped back into the head's space (p, d_k): centre + coordinates · axes."""
        return self.centre + np.asarray(coordinates, dtype=np.float64) @ self.axes  # (p, d_k)

    def visible(self, query: int) -> np.ndarray:
        """(m,) True for the keys query `query` may look at."""
        query = _check_index(query, self.queries.shape[0], "query")
        return np.ones(self.keys.shape[0], bool) if self.mask is None else ~self.mask[query]

    def order_kept(self, query: int, by: str = "dot") -> float:
        """The share of the query's pairs of visible keys that the plane puts in the order of their true scores.

        by="dot": the order of the lifted points' dot products, which is the order along the query's arrow from
        `origin`; by="distance": nearer in the plane = higher score. Pairs of equal score are left out; with no
        pair to compare, nothing is swapped: 1.0. A pair picked at random is in order half the time.
        """
        if by not in ORDER_BY:
            raise ConfigError(f"by must be one of {', '.join(ORDER_BY)}; got {by!r}.")
        keys = np.flatnonzero(self.visible(query))
        true = self.scores[query, keys]                                       # (k,)
        if by == "dot":
            seen = self.lift(self.keys[keys]) @ self.lift(self.queries[query:query + 1])[0]  # (k,)
        else:
            seen = -np.square(self.keys[keys] - self.queries[query]).sum(axis=1)         # (k,) nearer = larger
        s, s2 = np.triu_indices(len(keys), k=1)
        differ = true[s] != true[s2]
        if not differ.any():
            return 1.0
        same = np.sign(true[s] - true[s2]) == np.sign(seen[s] - seen[s2])
        return float(same[differ].mean())


def _check_index(value, size: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be a whole number, got {value!r}.")
    if not 0 <= value < size:
        raise ConfigError(f"{name} = {value} does not exist: there are {size} (numbered from 0).")
    return int(value)


def _spread(points: np.ndarray) -> float:
    """The mean squared distance of the points (p, d) from their centre."""
    return float(np.square(points - points.mean(axis=0)).sum(axis=1).mean())


def _principal_axes(centred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two directions of largest spread of centred points (p, d) and the spread along each: (axes (2, d),
    variances (2,)). Each axis points so that its largest entry is positive, so the picture never flips at random."""
    d = centred.shape[1]
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)  # vt: (min(p, d), d), rows by spread
    axes = np.zeros((2, d))
    kept = min(2, vt.shape[0])
    axes[:kept] = vt[:kept]
    largest = np.abs(axes).argmax(axis=1)
    axes *= np.where(axes[np.arange(2), largest] < 0, -1.0, 1.0)[:, None]
    variances = np.zeros(2)
    variances[:kept] = singular[:kept] ** 2
    return axes, variances


def qk_plane(trace: Trace, head: int, method: str = "pca") -> QKPlane:
    """Head `head`'s queries and keys projected together onto the plane that keeps most of their spread.

    Works for cross-attention (m keys from another sequence), grouped-query attention (query head i reads key/value
    head i // group_size) and RoPE (the plane is made of the turned queries and keys, which make the scores;
    keys_before_rope places the keys before their turn in the same plane). method: "pca" (the only one).
    """
    if method not in METHODS:
        raise ConfigError(f"method must be one of {', '.join(METHODS)}; got {method!r}.")
    h = trace.q.shape[0]
    head = _check_index(head, h, "head")
    kv_head = head // (h // trace.k.shape[0])
    q = trace.q[head].astype(np.float64)                           # (n, d_k)
    k = trace.k[kv_head].astype(np.float64)                        # (m, d_k)
    # The trace keeps scores = scale · q · k but not the scale: read it back (least squares, exact up to rounding).
    raw = trace.raw_scores(head).astype(np.float64)                # (n, m)
    size = float(np.square(raw).sum())
    scale = float((raw * trace.scores[head]).sum()) / size if size > 0 else 1.0

    # 1-2. √scale on both sides, then c and 1/c so that queries and keys spread equally.
    spread_q, spread_k = _spread(q), _spread(k)
    c = (spread_k / spread_q) ** 0.25 if spread_q > 0 and spread_k > 0 else 1.0
    query_factor, key_factor = c * np.sqrt(scale), np.sqrt(scale) / c
    a = query_factor * q                                           # (n, d_k)
    # 3. One shift for all keys, so that their centre is the queries' centre.
    centre = a.mean(axis=0)                                        # (d_k,)
    shift = centre - key_factor * k.mean(axis=0)                   # (d_k,)
    b = key_factor * k + shift                                     # (m, d_k)

    points = np.vstack([a, b]) - centre                            # (n + m, d_k) centred
    axes, variances = _principal_axes(points)
    total = float(np.square(points).sum())
    explained_axes = variances / total if total > 0 else np.array([1.0, 0.0])

    before = None
    if trace.k_before_rope is not None:
        k_before = key_factor * trace.k_before_rope[kv_head].astype(np.float64) + shift  # (m, d_k)
        before = (k_before - centre) @ axes.T                      # (m, 2)
    return QKPlane(
        head=head, kv_head=kv_head, method=method, queries=(a - centre) @ axes.T, keys=(b - centre) @ axes.T,
        keys_before_rope=before, explained=float(min(1.0, explained_axes.sum())), explained_axes=explained_axes,
        axes=axes, centre=centre, query_points=a, key_points=b, query_factor=float(query_factor),
        key_factor=float(key_factor), key_shift=shift, scores=trace.scores[head], weights=trace.weights[head],
        mask=None if trace.mask is None else trace.mask[head])
