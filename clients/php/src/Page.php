<?php

declare(strict_types=1);

namespace Lectern;

/** A page of the site (`GET /api/v1/page-builder`); not to be confused with a page of a list ({@see Collection}). */
final class Page implements \JsonSerializable
{
    public function __construct(
        public readonly string $id,
        public readonly string $title,
        public readonly string $slug,
        public readonly string $path,
        public readonly string $pageType,
        public readonly bool $isPublished,
        public readonly ?string $publishedAt,
        public readonly string $createdAt,
        public readonly string $updatedAt,
    ) {
    }

    /** @param array<string, mixed> $item an item as the API sends it */
    public static function fromArray(array $item): self
    {
        return new self(
            $item['id'] ?? null,
            $item['title'] ?? null,
            $item['slug'] ?? null,
            $item['path'] ?? null,
            $item['pageType'] ?? null,
            $item['isPublished'] ?? null,
            $item['publishedAt'] ?? null,
            $item['createdAt'] ?? null,
            $item['updatedAt'] ?? null,
        );
    }

    /** @return array<string, mixed> the API's fields, in its order */
    public function toArray(): array
    {
        return [
            'id' => $this->id,
            'title' => $this->title,
            'slug' => $this->slug,
            'path' => $this->path,
            'pageType' => $this->pageType,
            'isPublished' => $this->isPublished,
            'publishedAt' => $this->publishedAt,
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
