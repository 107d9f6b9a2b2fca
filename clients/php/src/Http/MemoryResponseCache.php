<?php

declare(strict_types=1);

namespace Lectern\Http;

/**
 * The default {@see ResponseCache}: the most recently used URLs in memory, least recently used
 * dropped first. It lives as long as the client object, so in a classic PHP-FPM request it pays off
 * only for repeated reads within the request; long-running workers keep it warm.
 */
final class MemoryResponseCache implements ResponseCache
{
    /** @var array<string, CachedResponse> oldest use first (PHP arrays keep insertion order) */
    private array $entries = [];

    public function __construct(private readonly int $maxEntries = 100)
    {
        if ($maxEntries < 1) {
            throw new \InvalidArgumentException('MemoryResponseCache: maxEntries must be at least 1');
        }
    }

    public function get(string $url): ?CachedResponse
    {
        $entry = $this->entries[$url] ?? null;
        if ($entry !== null) {
            unset($this->entries[$url]);
            $this->entries[$url] = $entry;
        }

        return $entry;
    }

    public function set(string $url, CachedResponse $response): void
    {
        unset($this->entries[$url]);
        $this->entries[$url] = $response;
        if (\count($this->entries) > $this->maxEntries) {
            unset($this->entries[array_key_first($this->entries)]);
        }
    }

    public function count(): int
    {
        return \count($this->entries);
    }
}
