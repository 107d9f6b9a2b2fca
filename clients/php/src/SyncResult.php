<?php

declare(strict_types=1);

namespace Lectern;

/**
 * What one `$lectern->submissions->sync()` run read: its submissions, newest first, and `until`,
 * the window's end as it was sent (ISO 8601), to store and pass as `since` to the next run.
 */
final class SyncResult implements \Countable
{
    /**
     * @param list<Submission> $items
     */
    public function __construct(
        public readonly array $items,
        public readonly string $until,
    ) {
    }

    public function count(): int
    {
        return \count($this->items);
    }
}
