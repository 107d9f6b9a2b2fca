<?php

declare(strict_types=1);

namespace Lectern;

use Lectern\Http\CurlHttpClient;
use Lectern\Http\HttpClient;
use Lectern\Http\MemoryResponseCache;
use Lectern\Http\ResponseCache;
use Lectern\Http\StreamHttpClient;
use Lectern\Http\Transport;
use Lectern\Resource\Forms;
use Lectern\Resource\Pages;
use Lectern\Resource\Redirects;
use Lectern\Resource\Submissions;

/**
 * A client of the Lectern content API. Failed requests throw a
 * {@see Exception\LecternException} subclass; `429` and `503` are retried first (see
 * {@see RetryPolicy}); pages fetched before are revalidated with `If-None-Match`, so an unchanged
 * page costs a `304` and comes from memory.
 *
 * ```php
 * $lectern = new Lectern\Lectern('https://content.example.com', getenv('LECTERN_API_KEY'));
 * $forms = $lectern->forms->list(active: true, pageSize: 50);
 * ```
 *
 * @property-read ResponseInfo|null $lastResponse the latest response received (null before the first)
 */
final class Lectern
{
    public readonly Forms $forms;

    /** Incremental reads of submissions: `sync()` over a window, handing back the next `since`. */
    public readonly Submissions $submissions;

    public readonly Pages $pages;

    public readonly Redirects $redirects;

    /** Where `ETag`s and bodies of fetched pages are remembered (by default the latest 100, in memory). */
    public readonly ResponseCache $responseCache;

    private readonly Transport $transport;

    /**
     * @param string                     $baseUrl        where Lectern runs, e.g. `https://content.example.com`
     *                                                   (the API lives under `/api/v1`)
     * @param string                     $apiKey         an API key (`lk_live_…`); keep it on the server
     * @param int                        $maxRetries     retries of `429` and `503` after the first attempt; 0 never retries
     * @param float                      $timeout        seconds an attempt may take, connecting and reading the body included
     * @param float                      $baseRetryDelay seconds of the first back-off without `Retry-After`, doubled per retry;
     *                                                   also the most jitter added to a `Retry-After`
     * @param float                      $maxRetryDelay  the longest wait before a retry; a longer `Retry-After` is thrown at once
     * @param HttpClient|null            $httpClient     defaults to curl when ext-curl is loaded, else PHP's stream functions
     * @param ResponseCache|null         $responseCache  defaults to the latest 100 pages in memory
     * @param (callable(float): void)|null $sleep        waits the given seconds (default `usleep`); tests pass a fake clock
     * @param (callable(): float)|null   $random         a number in [0, 1) for jitter (default `random_int`)
     * @param int                        $maxResponseBytes the most bytes a response body may hold once decompressed
     *                                                   (default 32 MiB); a larger one is a ServerException
     */
    public function __construct(
        string $baseUrl,
        #[\SensitiveParameter] string $apiKey,
        int $maxRetries = 2,
        float $timeout = 30.0,
        float $baseRetryDelay = 0.5,
        float $maxRetryDelay = 30.0,
        ?HttpClient $httpClient = null,
        ?ResponseCache $responseCache = null,
        ?callable $sleep = null,
        ?callable $random = null,
        int $maxResponseBytes = HttpClient::DEFAULT_MAX_RESPONSE_BYTES,
    ) {
        if (trim($baseUrl) === '' || preg_match('#^https?://[^/?\#]+#i', $baseUrl) !== 1) {
            throw new \InvalidArgumentException("Lectern: baseUrl must be an http(s) URL such as 'https://content.example.com'");
        }
        if (trim($apiKey) === '') {
            throw new \InvalidArgumentException('Lectern: apiKey is required');
        }
        if ($timeout <= 0) {
            throw new \InvalidArgumentException('Lectern: timeout must be more than 0 seconds');
        }
        if ($maxResponseBytes < 1) {
            throw new \InvalidArgumentException('Lectern: maxResponseBytes must be at least 1');
        }
        $this->responseCache = $responseCache ?? new MemoryResponseCache();
        $this->transport = new Transport(
            $baseUrl,
            $apiKey,
            $httpClient ?? (\extension_loaded('curl')
                ? new CurlHttpClient(maxResponseBytes: $maxResponseBytes)
                : new StreamHttpClient($maxResponseBytes)),
            $this->responseCache,
            new RetryPolicy($maxRetries, $baseRetryDelay, $maxRetryDelay),
            $timeout,
            $sleep ?? static function (float $seconds): void {
                usleep((int) round($seconds * 1_000_000));
            },
            $random ?? static fn (): float => random_int(0, \PHP_INT_MAX - 1) / \PHP_INT_MAX,
            $maxResponseBytes,
        );
        $this->forms = new Forms($this->transport);
        $this->submissions = new Submissions($this->forms);
        $this->pages = new Pages($this->transport);
        $this->redirects = new Redirects($this->transport);
    }

    public function __get(string $name): mixed
    {
        if ($name === 'lastResponse') {
            return $this->transport->lastResponse;
        }
        throw new \Error(\sprintf('Undefined property: %s::$%s', self::class, $name));
    }

    public function __isset(string $name): bool
    {
        return $name === 'lastResponse' && $this->transport->lastResponse !== null;
    }

    /** The latest response received, or null before the first: status, request id, rate-limit state. */
    public function getLastResponse(): ?ResponseInfo
    {
        return $this->transport->lastResponse;
    }

    /** The key's rate-limit state as the latest response said it, or null (before the first, or after one without it). */
    public function getRateLimit(): ?RateLimit
    {
        return $this->transport->lastResponse?->rateLimit;
    }

    public function __debugInfo(): array
    {
        // Never print the key, e.g. in a var_dump() of an object holding the client.
        return ['lastResponse' => $this->transport->lastResponse];
    }
}
