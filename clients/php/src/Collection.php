<?php

declare(strict_types=1);

namespace Lectern;

/**
 * One page of a list, as `list()` and `submissions()` return it: the items in `data`, the position
 * in `meta`. Iterating it (or `count()`) walks `data` only; `all()` walks every page.
 *
 * @template T of Form|Submission|Page|Redirect
 *
 * @implements \IteratorAggregate<int, T>
 */
final class Collection implements \IteratorAggregate, \Countable, \JsonSerializable
{
    /**
     * @param list<T> $data
     */
    public function __construct(
        public readonly array $data,
        public readonly ListMeta $meta,
    ) {
    }

    /** @return \ArrayIterator<int, T> */
    public function getIterator(): \ArrayIterator
    {
        return new \ArrayIterator($this->data);
    }

    public function count(): int
    {
        return \count($this->data);
    }

    /** True when a later page has items (`meta.page < meta.totalPages`). */
    public function hasMore(): bool
    {
        return $this->meta->page < $this->meta->totalPages;
    }

    /** @return array{data: list<T>, meta: ListMeta} */
    public function jsonSerialize(): array
    {
        return ['data' => $this->data, 'meta' => $this->meta];
    }
}
