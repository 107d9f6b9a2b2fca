<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\ConnectionException;
use Lectern\Exception\ServerException;

/**
 * {@see HttpClient} over ext-curl; one handle is reused, so keep-alive connections are too. The
 * timeout bounds the whole transfer, and a body is refused past `$maxResponseBytes` as curl
 * decompresses it, before it can fill PHP's memory.
 */
final class CurlHttpClient implements HttpClient
{
    private ?\CurlHandle $handle = null;

    public function __construct(
        private readonly float $connectTimeout = 10.0,
        private readonly int $maxResponseBytes = HttpClient::DEFAULT_MAX_RESPONSE_BYTES,
    ) {
        if (!\extension_loaded('curl')) {
            throw new \LogicException('CurlHttpClient needs ext-curl; use StreamHttpClient instead');
        }
        if ($maxResponseBytes < 1) {
            throw new \InvalidArgumentException('CurlHttpClient: maxResponseBytes must be at least 1');
        }
    }

    public function send(string $method, string $url, array $headers, float $timeout): HttpResponse
    {
        $this->handle ??= curl_init();
        $handle = $this->handle;
        curl_reset($handle);
        $lines = [];
        $body = '';
        $tooLarge = false;
        $maxBytes = $this->maxResponseBytes;
        $headerLines = [];
        foreach ($headers as $name => $value) {
            $headerLines[] = $name . ': ' . $value;
        }
        curl_setopt_array($handle, [
            CURLOPT_URL => $url,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_NOBODY => $method === 'HEAD',
            CURLOPT_HTTPHEADER => $headerLines,
            CURLOPT_FOLLOWLOCATION => false,
            // An empty string asks for every encoding curl can decode (gzip, br) and decodes it;
            // the write function below sees the decoded bytes, so the cap holds after inflating.
            CURLOPT_ENCODING => '',
            CURLOPT_WRITEFUNCTION => static function ($ch, string $data) use (&$body, &$tooLarge, $maxBytes): int {
                if (\strlen($body) + \strlen($data) > $maxBytes) {
                    $tooLarge = true;

                    // Fewer bytes than given: curl aborts the transfer.
                    return 0;
                }
                $body .= $data;

                return \strlen($data);
            },
            CURLOPT_CONNECTTIMEOUT_MS => (int) ceil(min($this->connectTimeout, $timeout) * 1000),
            CURLOPT_TIMEOUT_MS => (int) ceil($timeout * 1000),
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$lines): int {
                $lines[] = $line;

                return \strlen($line);
            },
        ]);
        $done = curl_exec($handle);
        $code = (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE);
        $message = curl_error($handle);
        $errno = curl_errno($handle);
        // The callbacks hold the body: let go of them (the connection stays open for the next request).
        curl_reset($handle);
        if ($tooLarge) {
            [$status, $parsed] = HttpResponse::parseHeaderLines($lines);
            throw new ServerException(
                \sprintf('The response of Lectern at %s is larger than maxResponseBytes (%d bytes) once decompressed', self::origin($url), $maxBytes),
                'unexpected_response',
                $status ?: null,
                $parsed['x-request-id'] ?? null,
            );
        }
        if ($done === false) {
            throw new ConnectionException(
                \sprintf('Could not reach Lectern at %s: %s (curl error %d)', self::origin($url), $message, $errno),
                'connection_error',
            );
        }
        [$status, $parsed] = HttpResponse::parseHeaderLines($lines);

        return new HttpResponse($status ?: $code, $parsed, $body);
    }

    /** Scheme, host and port only: an error message should not carry query strings. */
    private static function origin(string $url): string
    {
        $parts = parse_url($url);

        return ($parts['scheme'] ?? 'http') . '://' . ($parts['host'] ?? '') . (isset($parts['port']) ? ':' . $parts['port'] : '');
    }
}
