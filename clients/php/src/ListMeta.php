<?php

declare(strict_types=1);

namespace Lectern;

/** Where a page sits in its list: `totalPages` is `ceil(total / pageSize)`, 0 for an empty list. */
final class ListMeta implements \JsonSerializable
{
    public function __construct(
        public readonly int $total,
        public readonly int $page,
        public readonly int $pageSize,
        public readonly int $totalPages,
    ) {
    }

    /** @param array<string, mixed> $meta */
    public static function fromArray(array $meta): self
    {
        return new self($meta['total'] ?? null, $meta['page'] ?? null, $meta['pageSize'] ?? null, $meta['totalPages'] ?? null);
    }

    /** @return array{total: int, page: int, pageSize: int, totalPages: int} */
    public function toArray(): array
    {
        return ['total' => $this->total, 'page' => $this->page, 'pageSize' => $this->pageSize, 'totalPages' => $this->totalPages];
    }

    /** @return array<string, int> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
