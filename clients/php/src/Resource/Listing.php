<?php

declare(strict_types=1);

namespace Lectern\Resource;

use Lectern\Collection;
use Lectern\Exception\LecternException;
use Lectern\Exception\ServerException;
use Lectern\Http\Transport;
use Lectern\ListMeta;

/**
 * What every list endpoint shares: fetching one page as a {@see Collection} of value objects, and
 * walking every page lazily.
 *
 * @internal
 */
abstract class Listing
{
    /** The largest page the API serves: `all()` asks for it, to make as few requests as possible. */
    public const MAX_PAGE_SIZE = 100;

    public function __construct(protected readonly Transport $transport)
    {
    }

    /**
     * @template T
     *
     * @param callable(array<string, mixed>): T $item builds one item from its array
     * @param array<string, scalar|null>          $query
     *
     * @return Collection<T>
     *
     * @throws LecternException
     */
    protected function fetch(string $path, array $query, callable $item): Collection
    {
        $body = $this->transport->get($path, $query);
        try {
            if (!\is_array($body['data'] ?? null) || !\is_array($body['meta'] ?? null)) {
                throw new \TypeError('a list response needs `data` and `meta`');
            }

            return new Collection(
                array_map(static fn ($one) => $item(\is_array($one) ? $one : []), array_values($body['data'])),
                ListMeta::fromArray($body['meta']),
            );
        } catch (\TypeError $e) {
            $info = $this->transport->lastResponse;
            throw new ServerException(
                'Unexpected response from Lectern: the list does not have the fields of the API (is the base URL right?)',
                'unexpected_response',
                $info?->status,
                $info?->requestId,
                null,
                $e,
            );
        }
    }

    /**
     * Every item of a list, fetching page after page as the loop asks for more. Items added or
     * removed while the loop runs may shift the pages, so an item can be missed or seen twice.
     * An empty page ends the walk, and so does the first page's `total` (or `totalPages`): a server
     * whose later pages announce ever more cannot keep it going for ever.
     *
     * @template T
     *
     * @param callable(int $page, int $pageSize): Collection<T> $list
     *
     * @return \Generator<int, T>
     */
    protected static function walk(callable $list, ?int $pageSize): \Generator
    {
        $pageSize ??= self::MAX_PAGE_SIZE;
        $bound = new PageBound();
        for ($page = 1; ; ++$page) {
            $collection = $list($page, $pageSize);
            foreach ($collection->data as $item) {
                yield $item;
            }
            if ($bound->done($page, $collection->meta, \count($collection->data))) {
                return;
            }
        }
    }
}
