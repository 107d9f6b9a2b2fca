<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Exception\WebhookVerificationException;
use Lectern\Tests\Support\TestServer;
use Lectern\Webhook;
use PHPUnit\Framework\TestCase;

use function Lectern\verifyWebhook;

/** Runs every delivery of spec/webhook-vectors.json (shared by every official client) through the verifier. */
final class WebhookTest extends TestCase
{
    /** @return iterable<string, array{array<string, mixed>}> */
    public function vectors(): iterable
    {
        foreach (TestServer::spec('webhook-vectors.json')['vectors'] as $vector) {
            yield $vector['name'] => [$vector];
        }
    }

    /**
     * @dataProvider vectors
     *
     * @param array<string, mixed> $vector
     */
    public function testEachVectorGivesItsEventOrItsReason(array $vector): void
    {
        $verify = static fn (array $headers) => verifyWebhook($vector['payload'], $headers, $vector['secret'], $vector['tolerance'] ?? 300, $vector['now']);
        if (isset($vector['expect']['event'])) {
            $this->assertSame($vector['expect']['event'], $verify($vector['headers']));
            // PSR-7's getHeaders() gives each header as a list of values.
            $this->assertSame($vector['expect']['event'], $verify(array_map(static fn (string $value) => [$value], $vector['headers'])));

            return;
        }
        try {
            $verify($vector['headers']);
            $this->fail('expected a WebhookVerificationException');
        } catch (WebhookVerificationException $e) {
            $this->assertSame($vector['expect']['error'], $e->reason);
            $this->assertNotSame('', $e->getMessage());
        }
    }

    public function testTheVectorsHoldValidAndRefusedDeliveriesOfEveryKind(): void
    {
        $reasons = [];
        foreach (TestServer::spec('webhook-vectors.json')['vectors'] as $vector) {
            $reasons[$vector['expect']['error'] ?? 'valid'] = true;
        }
        ksort($reasons);
        $this->assertSame(['invalid_payload', 'invalid_secret', 'invalid_signature', 'invalid_timestamp', 'missing_header', 'stale_timestamp', 'valid'], array_keys($reasons));
    }

    public function testItReadsTheHeadersFromServerVariables(): void
    {
        $vector = TestServer::spec('webhook-vectors.json')['vectors'][0];
        $server = ['REQUEST_METHOD' => 'POST'];
        foreach ($vector['headers'] as $name => $value) {
            $server['HTTP_' . strtoupper(str_replace('-', '_', $name))] = $value;
        }
        $now = new \DateTimeImmutable('@' . $vector['now']);
        $this->assertSame($vector['expect']['event'], Webhook::verify($vector['payload'], $server, $vector['secret'], now: $now));
    }

    public function testANegativeToleranceIsAProgrammingError(): void
    {
        $vector = TestServer::spec('webhook-vectors.json')['vectors'][0];
        $this->expectException(\InvalidArgumentException::class);
        Webhook::verify($vector['payload'], $vector['headers'], $vector['secret'], -1);
    }
}
