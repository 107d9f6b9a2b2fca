<?php

declare(strict_types=1);

namespace Lectern\Resource;

use Lectern\ListMeta;

/**
 * When a walk through the pages of a list ends: at an empty page, or once the first page's `total`
 * items (or `totalPages` pages) have come, whatever later pages announce.
 *
 * @internal
 */
final class PageBound
{
    private ?int $total = null;

    private ?int $totalPages = null;

    private int $seen = 0;

    public function done(int $page, ListMeta $meta, int $items): bool
    {
        $this->total ??= $meta->total;
        $this->totalPages ??= $meta->totalPages;
        $this->seen += $items;

        return $items === 0 || $this->seen >= $this->total || $page >= $this->totalPages;
    }
}
