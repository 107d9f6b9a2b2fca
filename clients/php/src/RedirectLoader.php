<?php

declare(strict_types=1);

namespace Lectern;

use Lectern\Exception\LecternException;
use Lectern\Exception\RedirectLimitException;
use Lectern\Http\CachedResponse;
use Lectern\Resource\PageBound;

/**
 * Builds a {@see RedirectMatcher} from the API (every active redirect) and keeps it fresh cheaply.
 *
 * A PHP process usually lives for one request, so an in-memory cache alone would ask the API on
 * every request. Give the loader a cache file and every process of the host shares one copy:
 *
 * - younger than `$maxAge` seconds, the file is used as it is: no request at all;
 * - older, one process revalidates it (one `GET` per page with `If-None-Match`: an unchanged page is
 *   a `304` with no body) while the others, finding the refresh lock taken, keep using the old copy;
 * - when the API cannot be reached the old copy is kept for another `$maxAge` (see `lastError`),
 *   so an outage of Lectern never takes the site down with it; only with no copy at all does
 *   `matcher()` throw.
 *
 * The cache file holds the active redirects in the matcher's compact form, which is all a request
 * reads; a second file beside it (`<cacheFile>.pages`) holds each API page with its `ETag`, read only
 * to revalidate. Both hold only redirects, never the API key, and are replaced atomically (write,
 * then rename). Without a file the loader caches in memory, which suits long-running workers
 * (RoadRunner, Swoole, queue consumers).
 */
final class RedirectLoader
{
    /** The most redirects a loader holds unless `$maxRedirects` says otherwise. */
    public const DEFAULT_MAX_REDIRECTS = 100_000;

    private const FORMAT = 1;

    /** The latest failure to refresh, when the old copy was kept; null after a successful refresh. */
    public ?LecternException $lastError = null;

    private ?RedirectMatcher $matcher = null;

    /** When the copy in memory was saved (Unix time). */
    private ?int $savedAt = null;

    /** @var list<array{url: string, etag: string|null, body: string}>|null the API pages of the copy, when read */
    private ?array $pages = null;

    private readonly \Closure $clock;

    /**
     * @param Lectern                $lectern   a client whose key may read redirects; give it a short timeout
     *                                          (a refresh runs inside a visitor's request)
     * @param string|null            $cacheFile a file the web server may write (its folder must exist), shared by
     *                                          every process of the host; null keeps the copy in memory only
     * @param int                    $maxAge    seconds a copy is used without asking the API
     * @param (callable(): int)|null $clock     the Unix time (default `time()`); tests pass a fake clock
     * @param int                    $maxRedirects the most active redirects the loader holds: a refresh that finds
     *                                          more fails with a RedirectLimitException, and the copy stays
     */
    public function __construct(
        private readonly Lectern $lectern,
        private readonly ?string $cacheFile = null,
        private readonly int $maxAge = 60,
        ?callable $clock = null,
        private readonly int $maxRedirects = self::DEFAULT_MAX_REDIRECTS,
    ) {
        if ($maxAge < 0) {
            throw new \InvalidArgumentException('RedirectLoader: maxAge must not be negative');
        }
        if ($maxRedirects < 1) {
            throw new \InvalidArgumentException('RedirectLoader: maxRedirects must be at least 1');
        }
        if ($cacheFile !== null && !is_writable(\dirname($cacheFile))) {
            throw new \InvalidArgumentException(\sprintf('RedirectLoader: the folder of the cache file %s must exist and be writable', $cacheFile));
        }
        $this->clock = \Closure::fromCallable($clock ?? 'time');
    }

    /**
     * The matcher of the current redirects: from memory or the cache file while fresh, otherwise
     * refreshed from the API (with conditional requests).
     *
     * @throws LecternException when there is no copy yet and the API cannot be read
     */
    public function matcher(): RedirectMatcher
    {
        if ($this->matcher !== null && $this->fresh($this->savedAt)) {
            return $this->matcher;
        }
        $this->readCopy();
        if ($this->matcher !== null && $this->fresh($this->savedAt)) {
            return $this->matcher;
        }

        return $this->refreshUnderLock();
    }

    /**
     * Asks the API now, whatever the age of the copy (e.g. from a deploy hook or a cron job that
     * keeps the file warm), and saves the result.
     *
     * @throws LecternException when the API cannot be read (the copy is left as it was)
     */
    public function refresh(): RedirectMatcher
    {
        $pages = $this->fetchPages($this->pages ?? $this->readPages() ?? []);
        $redirects = [];
        foreach ($pages as $page) {
            $body = json_decode($page['body'], true);
            foreach (\is_array($body) && \is_array($body['data'] ?? null) ? $body['data'] : [] as $item) {
                if (\is_array($item)) {
                    $redirects[] = $item;
                }
            }
        }
        $matcher = new RedirectMatcher($redirects);
        $savedAt = ($this->clock)();
        $this->write($this->pagesFile(), ['format' => self::FORMAT, 'pages' => $pages]);
        $this->write($this->cacheFile, ['format' => self::FORMAT, 'savedAt' => $savedAt, 'rules' => $matcher->exportRules()]);
        [$this->matcher, $this->savedAt, $this->pages, $this->lastError] = [$matcher, $savedAt, $pages, null];

        return $matcher;
    }

    private function refreshUnderLock(): RedirectMatcher
    {
        $lock = $this->cacheFile !== null ? @fopen($this->cacheFile . '.lock', 'c') : false;
        try {
            if ($lock !== false && !flock($lock, LOCK_EX | LOCK_NB)) {
                if ($this->matcher !== null) {
                    // Another process is refreshing: the old copy serves this request.
                    return $this->matcher;
                }
                flock($lock, LOCK_EX);
                $this->readCopy();
                if ($this->matcher !== null && $this->fresh($this->savedAt)) {
                    return $this->matcher;
                }
            }
            try {
                return $this->refresh();
            } catch (LecternException $error) {
                if ($this->matcher === null) {
                    throw $error;
                }
                // Keep serving the old copy, and wait another maxAge before asking again, so that
                // an outage does not make every request wait for a timeout.
                $this->lastError = $error;
                $this->savedAt = ($this->clock)();
                $this->write($this->cacheFile, ['format' => self::FORMAT, 'savedAt' => $this->savedAt, 'rules' => $this->matcher->exportRules()]);

                return $this->matcher;
            }
        } finally {
            if ($lock !== false) {
                flock($lock, LOCK_UN);
                fclose($lock);
            }
        }
    }

    /**
     * Every page of active redirects, revalidating the pages of the previous copy.
     *
     * @param list<array{url: string, etag: string|null, body: string}> $previous
     *
     * @return list<array{url: string, etag: string|null, body: string}>
     */
    private function fetchPages(array $previous): array
    {
        // A new process starts with an empty response cache: hand it the ETags of the last copy.
        foreach ($previous as $page) {
            if ($page['etag'] !== null && $this->lectern->responseCache->get($page['url']) === null) {
                $this->lectern->responseCache->set($page['url'], new CachedResponse($page['etag'], $page['body']));
            }
        }
        $pages = [];
        $bound = new PageBound();
        $count = 0;
        for ($number = 1; ; ++$number) {
            $list = $this->lectern->redirects->list(page: $number, pageSize: Resource\Listing::MAX_PAGE_SIZE, active: true);
            $count += \count($list->data);
            if ($count > $this->maxRedirects) {
                throw new RedirectLimitException($this->maxRedirects);
            }
            $url = $this->lectern->lastResponse?->url ?? '';
            $cached = $this->lectern->responseCache->get($url);
            $pages[] = [
                'url' => $url,
                'etag' => $cached?->etag,
                'body' => $cached !== null ? $cached->body : json_encode($list, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE),
            ];
            if ($bound->done($number, $list->meta, \count($list->data))) {
                return $pages;
            }
        }
    }

    private function fresh(?int $savedAt): bool
    {
        return $savedAt !== null && ($this->clock)() - $savedAt < $this->maxAge;
    }

    /** Takes the cache file's copy when it is newer than the one in memory; a damaged or foreign file is ignored. */
    private function readCopy(): void
    {
        $data = $this->read($this->cacheFile);
        if ($data === null || !\is_int($data['savedAt'] ?? null) || !\is_array($data['rules'] ?? null)) {
            return;
        }
        if ($this->savedAt !== null && $data['savedAt'] < $this->savedAt) {
            return;
        }
        try {
            $this->matcher = RedirectMatcher::fromExportedRules($data['rules']);
        } catch (\InvalidArgumentException) {
            return;
        }
        $this->savedAt = $data['savedAt'];
        // The pages belong to the copy just read; they are read again when a refresh needs them.
        $this->pages = null;
    }

    /** @return list<array{url: string, etag: string|null, body: string}>|null */
    private function readPages(): ?array
    {
        $data = $this->read($this->pagesFile());
        if ($data === null || !\is_array($data['pages'] ?? null)) {
            return null;
        }
        $pages = [];
        foreach ($data['pages'] as $page) {
            if (!\is_array($page) || !\is_string($page['url'] ?? null) || !\is_string($page['body'] ?? null)) {
                return null;
            }
            $pages[] = ['url' => $page['url'], 'etag' => \is_string($page['etag'] ?? null) ? $page['etag'] : null, 'body' => $page['body']];
        }

        return $pages;
    }

    private function pagesFile(): ?string
    {
        return $this->cacheFile === null ? null : $this->cacheFile . '.pages';
    }

    /** @return array<string, mixed>|null the file's JSON when it is this loader's format */
    private function read(?string $file): ?array
    {
        if ($file === null || !is_file($file)) {
            return null;
        }
        $text = @file_get_contents($file);
        $data = \is_string($text) ? json_decode($text, true) : null;

        return \is_array($data) && ($data['format'] ?? null) === self::FORMAT ? $data : null;
    }

    /** @param array<string, mixed> $data */
    private function write(?string $file, array $data): void
    {
        if ($file === null) {
            return;
        }
        $json = json_encode($data, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        $temporary = @tempnam(\dirname($file), '.lectern-redirects-');
        if ($temporary !== false) {
            // tempnam() makes the file private; readers may be other users (a CLI warm-up, the web server).
            @chmod($temporary, 0666 & ~umask());
            if (file_put_contents($temporary, $json) !== false && @rename($temporary, $file)) {
                return;
            }
            @unlink($temporary);
        }
        // A copy that cannot be saved still serves this process; the next one asks the API again.
        trigger_error(\sprintf('Lectern\RedirectLoader: cannot write the cache file %s', $file), E_USER_WARNING);
    }
}
