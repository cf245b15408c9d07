import LeanIndex.Cli
import LeanIndex.Flags
import LeanIndex.Print
import LeanIndex.Record
import LeanIndex.Extract
