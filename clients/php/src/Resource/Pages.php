<?php

declare(strict_types=1);

namespace Lectern\Resource;

use Lectern\Collection;
use Lectern\Exception\LecternException;
use Lectern\Page;

/** `GET /api/v1/page-builder` (needs `pages:read`): the site's pages, oldest first. */
final class Pages extends Listing
{
    /**
     * One page of the site's pages.
     *
     * @param int|null  $page      from 1 (default 1)
     * @param int|null  $pageSize  1 to 100 (default 20)
     * @param bool|null $published true: only published pages; false: only unpublished ones; null: all
     *
     * @return Collection<Page>
     *
     * @throws LecternException
     */
    public function list(?int $page = null, ?int $pageSize = null, ?bool $published = null): Collection
    {
        return $this->fetch('/page-builder', ['page' => $page, 'pageSize' => $pageSize, 'published' => $published], Page::fromArray(...));
    }

    /**
     * Every page of the site, fetched `$pageSize` (default 100) at a time as the loop asks for more.
     *
     * @return \Generator<int, Page>
     *
     * @throws LecternException
     */
    public function all(?int $pageSize = null, ?bool $published = null): \Generator
    {
        return self::walk(fn (int $page, int $size) => $this->list($page, $size, $published), $pageSize);
    }
}
