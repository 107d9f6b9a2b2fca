<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\LecternException;
use Lectern\Exception\ServerException;
use Lectern\RateLimit;
use Lectern\ResponseInfo;
use Lectern\RetryPolicy;

/**
 * Sends authenticated `GET`s to the API: revalidates remembered pages with `If-None-Match`, retries
 * what may be retried, and records the latest response.
 *
 * @internal the client's plumbing; use {@see \Lectern\Lectern}
 */
final class Transport
{
    public const VERSION = '0.2.0';

    public ?ResponseInfo $lastResponse = null;

    private readonly string $baseUrl;

    private readonly \Closure $sleep;

    private readonly \Closure $random;

    /**
     * @param callable(float): void $sleep  waits the given seconds
     * @param callable(): float     $random a number in [0, 1)
     */
    public function __construct(
        string $baseUrl,
        #[\SensitiveParameter] private readonly string $apiKey,
        private readonly HttpClient $http,
        private readonly ResponseCache $cache,
        private readonly RetryPolicy $retry,
        private readonly float $timeout,
        callable $sleep,
        callable $random,
        private readonly int $maxResponseBytes = HttpClient::DEFAULT_MAX_RESPONSE_BYTES,
    ) {
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->sleep = \Closure::fromCallable($sleep);
        $this->random = \Closure::fromCallable($random);
    }

    /** The URL of an API path with its query; `null` parameters are left out, booleans sent as `true`/`false`. */
    public function url(string $path, array $query = []): string
    {
        $pairs = [];
        foreach ($query as $name => $value) {
            if ($value === null) {
                continue;
            }
            $text = \is_bool($value) ? ($value ? 'true' : 'false') : (string) $value;
            $pairs[] = rawurlencode((string) $name) . '=' . rawurlencode($text);
        }

        return $this->baseUrl . '/api/v1' . $path . ($pairs === [] ? '' : '?' . implode('&', $pairs));
    }

    /**
     * The decoded JSON body of `GET $path`.
     *
     * @param array<string, scalar|null> $query
     *
     * @return array<string, mixed>
     *
     * @throws LecternException
     */
    public function get(string $path, array $query = []): array
    {
        $url = $this->url($path, $query);
        $headers = [
            'Authorization' => 'Bearer ' . $this->apiKey,
            'Accept' => 'application/json',
            'User-Agent' => 'lectern-php/' . self::VERSION . ' PHP/' . \PHP_VERSION,
        ];
        for ($attempt = 0; ; ++$attempt) {
            $cached = $this->cache->get($url);
            if ($cached !== null) {
                $headers['If-None-Match'] = $cached->etag;
            } else {
                unset($headers['If-None-Match']);
            }
            $response = $this->http->send('GET', $url, $headers, $this->timeout);
            // The built-in clients stop reading at the cap; one of the caller's may not.
            if (\strlen($response->body) > $this->maxResponseBytes) {
                throw new ServerException(
                    \sprintf('The response of Lectern is larger than maxResponseBytes (%d bytes)', $this->maxResponseBytes),
                    'unexpected_response',
                    $response->status,
                    $response->header('x-request-id'),
                );
            }
            $this->lastResponse = new ResponseInfo(
                $response->status,
                $response->header('x-request-id'),
                self::rateLimit($response),
                $url,
                $response->header('etag'),
            );
            if ($response->status === 304 && $cached !== null) {
                return $this->decode($cached->body, $response);
            }
            if ($response->status >= 200 && $response->status < 300) {
                $decoded = $this->decode($response->body, $response);
                $etag = $response->header('etag');
                if ($etag !== null && $etag !== '') {
                    $this->cache->set($url, new CachedResponse($etag, $response->body));
                }

                return $decoded;
            }
            $error = ErrorMapper::fromResponse($response);
            $delay = $this->retry->delay($error, $attempt, $this->random);
            if ($delay === null) {
                throw $error;
            }
            ($this->sleep)($delay);
        }
    }

    /** @return array<string, mixed> */
    private function decode(string $body, HttpResponse $response): array
    {
        try {
            $decoded = json_decode($body, true, 512, \JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            $decoded = null;
        }
        if (!\is_array($decoded)) {
            throw new ServerException(
                \sprintf('Unexpected HTTP %d response from Lectern: the body is not a JSON object', $response->status),
                'unexpected_response',
                $response->status,
                $response->header('x-request-id'),
            );
        }

        return $decoded;
    }

    private static function rateLimit(HttpResponse $response): ?RateLimit
    {
        $limit = $response->header('x-ratelimit-limit');
        $remaining = $response->header('x-ratelimit-remaining');
        $reset = $response->header('x-ratelimit-reset');
        if ($limit === null || $remaining === null || $reset === null) {
            return null;
        }

        return new RateLimit((int) $limit, (int) $remaining, (int) $reset);
    }
}
