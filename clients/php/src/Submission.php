<?php

declare(strict_types=1);

namespace Lectern;

/** A form submission (`GET /api/v1/forms/{id}/submissions`). It holds personal data: handle it so. */
final class Submission implements \JsonSerializable
{
    /**
     * @param array<string, mixed> $data the submitted fields, as decoded from JSON
     */
    public function __construct(
        public readonly string $id,
        public readonly array $data,
        public readonly ?string $ipAddress,
        public readonly ?string $userAgent,
        public readonly ?string $referrer,
        public readonly ?string $submittedBy,
        public readonly bool $isRead,
        public readonly bool $isStarred,
        public readonly ?string $notes,
        public readonly string $createdAt,
        public readonly string $updatedAt,
    ) {
    }

    /** @param array<string, mixed> $item an item as the API sends it */
    public static function fromArray(array $item): self
    {
        return new self(
            $item['id'] ?? null,
            $item['data'] ?? null,
            $item['ipAddress'] ?? null,
            $item['userAgent'] ?? null,
            $item['referrer'] ?? null,
            $item['submittedBy'] ?? null,
            $item['isRead'] ?? null,
            $item['isStarred'] ?? null,
            $item['notes'] ?? null,
            $item['createdAt'] ?? null,
            $item['updatedAt'] ?? null,
        );
    }

    /** @return array<string, mixed> the API's fields, in its order */
    public function toArray(): array
    {
        return [
            'id' => $this->id,
            'data' => $this->data,
            'ipAddress' => $this->ipAddress,
            'userAgent' => $this->userAgent,
            'referrer' => $this->referrer,
            'submittedBy' => $this->submittedBy,
            'isRead' => $this->isRead,
            'isStarred' => $this->isStarred,
            'notes' => $this->notes,
            'createdAt' => $this->createdAt,
            'updatedAt' => $this->updatedAt,
        ];
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
