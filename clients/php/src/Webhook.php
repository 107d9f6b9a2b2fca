<?php

declare(strict_types=1);

namespace Lectern;

use Lectern\Exception\WebhookVerificationException;

/**
 * Verifies the webhooks Lectern sends, as the Standard Webhooks specification says: the
 * `webhook-signature` header holds `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by
 * the endpoint secret's decoded bytes (the secret is `whsec_` and base64). {@see verifyWebhook()}
 * is the same as a function.
 */
final class Webhook
{
    /** How far a delivery's timestamp may be from now, in seconds, unless `$tolerance` says otherwise. */
    public const DEFAULT_TOLERANCE = 300;

    private const SECRET_PREFIX = 'whsec_';

    /**
     * Checks that a delivery comes from Lectern and is recent, and returns its event.
     *
     * @param string                                  $payload   the raw request body, exactly as received
     *                                                           (`file_get_contents('php://input')`): decoding
     *                                                           and re-encoding it breaks the signature
     * @param array<array-key, string|list<string>>   $headers   the request's headers, names in any case:
     *                                                           `getallheaders()`, a PSR-7 `getHeaders()`, or
     *                                                           `$_SERVER` (`HTTP_WEBHOOK_ID`…)
     * @param string                                  $secret    the endpoint's signing secret (`whsec_…`)
     * @param int                                     $tolerance how far, in seconds, `webhook-timestamp` may be from now
     * @param int|\DateTimeInterface|null             $now       the time to check against (Unix seconds): a
     *                                                           fixed clock in tests; the real time by default
     *
     * @return array<array-key, mixed> the event: `id`, `type`, `createdAt` and `data`
     *
     * @throws WebhookVerificationException
     */
    public static function verify(
        string $payload,
        array $headers,
        #[\SensitiveParameter] string $secret,
        int $tolerance = self::DEFAULT_TOLERANCE,
        int|\DateTimeInterface|null $now = null,
    ): array {
        if ($tolerance < 0) {
            throw new \InvalidArgumentException(\sprintf('Lectern\Webhook: the tolerance must be at least 0 seconds (got %d)', $tolerance));
        }
        $id = self::header($headers, 'webhook-id');
        $timestamp = self::header($headers, 'webhook-timestamp');
        $signatures = self::header($headers, 'webhook-signature');
        foreach (['webhook-id' => $id, 'webhook-timestamp' => $timestamp, 'webhook-signature' => $signatures] as $name => $value) {
            if ($value === '') {
                throw new WebhookVerificationException('missing_header', "The $name header is missing");
            }
        }
        $key = self::key($secret);
        if (preg_match('/^[0-9]{1,15}$/D', $timestamp) !== 1) {
            throw new WebhookVerificationException('invalid_timestamp', 'The webhook-timestamp header is not a Unix time in seconds');
        }
        $now = $now instanceof \DateTimeInterface ? $now->getTimestamp() : ($now ?? time());
        $age = $now - (int) $timestamp;
        if (abs($age) > $tolerance) {
            throw new WebhookVerificationException('stale_timestamp', \sprintf(
                'The webhook-timestamp is %d seconds %s, more than the %d allowed',
                abs($age),
                $age > 0 ? 'old' : 'ahead',
                $tolerance,
            ));
        }

        $expected = base64_encode(hash_hmac('sha256', "$id.$timestamp.$payload", $key, true));
        // Several signatures may be sent at once (a secret being rotated): any valid `v1` one passes.
        $valid = false;
        foreach (explode(' ', $signatures) as $entry) {
            $parts = explode(',', $entry, 2);
            if (\count($parts) === 2 && $parts[0] === 'v1' && hash_equals($expected, $parts[1])) {
                $valid = true;
            }
        }
        if (!$valid) {
            throw new WebhookVerificationException('invalid_signature', 'No webhook-signature matches the payload');
        }
        try {
            $event = json_decode($payload, true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            throw new WebhookVerificationException('invalid_payload', 'The webhook payload is not JSON', $e);
        }
        if (!\is_array($event)) {
            throw new WebhookVerificationException('invalid_payload', 'The webhook payload is not a JSON object');
        }

        return $event;
    }

    /** @param array<array-key, mixed> $headers */
    private static function header(array $headers, string $name): string
    {
        foreach ($headers as $key => $value) {
            $key = str_replace('_', '-', strtolower((string) $key));
            if ($key !== $name && $key !== "http-$name") {
                continue;
            }
            if (\is_array($value)) {
                $value = $value[array_key_first($value)] ?? '';
            }

            return \is_string($value) ? $value : '';
        }

        return '';
    }

    private static function key(#[\SensitiveParameter] string $secret): string
    {
        $encoded = str_starts_with($secret, self::SECRET_PREFIX) ? substr($secret, \strlen(self::SECRET_PREFIX)) : $secret;
        $key = preg_match('#^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$#D', $encoded) === 1
            ? base64_decode($encoded, true)
            : false;
        if ($key === false || $key === '') {
            throw new WebhookVerificationException('invalid_secret', 'The webhook secret is not `whsec_` followed by base64');
        }

        return $key;
    }
}
