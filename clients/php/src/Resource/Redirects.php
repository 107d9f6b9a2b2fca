<?php

declare(strict_types=1);

namespace Lectern\Resource;

use Lectern\Collection;
use Lectern\Exception\LecternException;
use Lectern\Redirect;

/** `GET /api/v1/page-builder/redirects` (needs `redirects:read`): redirects, oldest first. */
final class Redirects extends Listing
{
    /**
     * One page of redirects.
     *
     * @param int|null  $page     from 1 (default 1)
     * @param int|null  $pageSize 1 to 100 (default 20)
     * @param bool|null $active   true: only active redirects; false: only inactive ones; null: all
     *
     * @return Collection<Redirect>
     *
     * @throws LecternException
     */
    public function list(?int $page = null, ?int $pageSize = null, ?bool $active = null): Collection
    {
        return $this->fetch('/page-builder/redirects', ['page' => $page, 'pageSize' => $pageSize, 'active' => $active], Redirect::fromArray(...));
    }

    /**
     * Every redirect, fetched `$pageSize` (default 100) at a time as the loop asks for more.
     *
     * @return \Generator<int, Redirect>
     *
     * @throws LecternException
     */
    public function all(?int $pageSize = null, ?bool $active = null): \Generator
    {
        return self::walk(fn (int $page, int $size) => $this->list($page, $size, $active), $pageSize);
    }
}
