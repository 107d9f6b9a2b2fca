/** The content importer (SPEC §4); it lives in `./import/`, one concern per file. */
export {
  createImporter,
  type ImportDocument,
  ImportError,
  type Importer,
  type ImportKind,
  type ImportResult,
  type KindCounts,
  MAX_LISTED_PROBLEMS,
} from './import/index.js'
