"""The price table of ``score --prices`` (``prices.toml``): what a model's tokens cost.

Cost is kept apart from the usage proxy (token counts): it exists only where the table
prices the model that answered, and is never guessed for one it does not. It is a list-price
estimate (tokens at the table's prices), never an invoice, and is refused for conditions a
plan pays for (``plan_funded``) and for forge bots, whose tokens are not reported.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Price", "PriceTable"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Price(_Model):
    input_per_mtok: float = Field(ge=0, description="Price of a million input (prompt) tokens.")
    output_per_mtok: float = Field(ge=0, description="Price of a million output (completion) tokens.")


class PriceTable(_Model):
    currency: str | None = Field(default=None, max_length=16, description="What the prices are in (USD, EUR…); "
                                 "printed beside every cost.")  # fmt: skip
    prices: dict[str, Price] = Field(min_length=1, description="By model id, as the endpoint reports it "
                                     "(model_returned; model_requested for a run that returned none): list "
                                     "prices, so every cost is a list-price estimate, not an invoice.")  # fmt: skip
    plan_funded: list[str] = Field(default_factory=list, description="Conditions whose use a plan or seat pays "
                                   "(a subscription, not per token): no cost is estimated for them.")
