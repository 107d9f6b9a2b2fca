<?php

declare(strict_types=1);

namespace Lectern;

if (!\function_exists(__NAMESPACE__ . '\applyRedirects')) {
    /**
     * For a front controller: when the request matches a redirect, sends its status (301/302) and
     * `Location` header and returns true, so the script can stop; otherwise sends nothing and
     * returns false.
     *
     * ```php
     * if (Lectern\applyRedirects($matcher)) {
     *     exit;
     * }
     * ```
     *
     * @param string|null $requestUri the request target; `$_SERVER['REQUEST_URI']` by default (as the
     *                                client sent it: still percent-encoded, with its query string)
     *
     * @throws \LogicException when output has already started, so headers can no longer be sent
     */
    function applyRedirects(RedirectMatcher $matcher, ?string $requestUri = null): bool
    {
        $requestUri ??= \is_string($_SERVER['REQUEST_URI'] ?? null) ? $_SERVER['REQUEST_URI'] : null;
        if ($requestUri === null || $requestUri === '') {
            return false;
        }
        if ($requestUri[0] !== '/') {
            // The absolute form a proxy may send (`http://host/path?q`): only the path and query count.
            if (preg_match('#^[A-Za-z][A-Za-z0-9+.-]*://[^/?\#]*(.*)$#s', $requestUri, $m) !== 1) {
                return false;
            }
            $requestUri = $m[1] === '' || $m[1][0] !== '/' ? '/' . $m[1] : $m[1];
        }
        $match = $matcher->match($requestUri);
        // The query is carried over byte for byte; one that would break the header line is not followed.
        if ($match === null || preg_match('/[\x00-\x1F\x7F]/', $match->location) === 1) {
            return false;
        }
        if (headers_sent($file, $line)) {
            throw new \LogicException(\sprintf('Lectern\applyRedirects: output started at %s:%d, so no redirect can be sent; call it before any output', $file, $line));
        }
        header('Location: ' . $match->location, true, $match->status);

        return true;
    }
}

if (!\function_exists(__NAMESPACE__ . '\verifyWebhook')) {
    /**
     * Checks that a webhook delivery comes from Lectern and is recent, and returns its event; the same
     * as {@see Webhook::verify()}.
     *
     * ```php
     * $event = Lectern\verifyWebhook(file_get_contents('php://input'), getallheaders(), getenv('LECTERN_WEBHOOK_SECRET'));
     * ```
     *
     * @param array<array-key, string|list<string>> $headers
     *
     * @return array<array-key, mixed>
     *
     * @throws Exception\WebhookVerificationException
     */
    function verifyWebhook(
        string $payload,
        array $headers,
        #[\SensitiveParameter] string $secret,
        int $tolerance = Webhook::DEFAULT_TOLERANCE,
        int|\DateTimeInterface|null $now = null,
    ): array {
        return Webhook::verify($payload, $headers, $secret, $tolerance, $now);
    }
}
