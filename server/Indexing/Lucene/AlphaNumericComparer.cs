using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// RavenDB's <c>order by F as alphaNumeric</c>: runs of digits compare as numbers, the rest as
/// lowercased text, so "file2" comes before "file10". Missing values come first.
/// </summary>
public sealed class AlphaNumericComparer : IComparer<string?>
{
    public static readonly AlphaNumericComparer Instance = new();

    public int Compare(string? x, string? y)
    {
        if (x is null || y is null)
        {
            return x is null ? (y is null ? 0 : -1) : 1;
        }
        int i = 0, j = 0;
        while (i < x.Length && j < y.Length)
        {
            if (char.IsAsciiDigit(x[i]) && char.IsAsciiDigit(y[j]))
            {
                var si = i;
                var sj = j;
                while (i < x.Length && char.IsAsciiDigit(x[i]))
                {
                    i++;
                }
                while (j < y.Length && char.IsAsciiDigit(y[j]))
                {
                    j++;
                }
                var a = x.AsSpan(si, i - si).TrimStart('0');
                var b = y.AsSpan(sj, j - sj).TrimStart('0');
                if (a.Length != b.Length)
                {
                    return a.Length.CompareTo(b.Length);
                }
                var digits = a.SequenceCompareTo(b);
                if (digits != 0)
                {
                    return Math.Sign(digits);
                }
                continue;
            }
            var c = char.ToLowerInvariant(x[i]).CompareTo(char.ToLowerInvariant(y[j]));
            if (c != 0)
            {
                return c;
            }
            i++;
            j++;
        }
        return (x.Length - i).CompareTo(y.Length - j);
    }

    /// <summary>A Lucene sort source over a field's string doc values, compared alphanumerically.</summary>
    public sealed class Source : FieldComparerSource
    {
        public override FieldComparer NewComparer(string fieldname, int numHits, int sortPos, bool reversed) => new Comparer(fieldname, numHits);
    }

    private sealed class Comparer(string field, int hits) : FieldComparer<string>
    {
        private readonly string?[] _values = new string?[hits];
        private SortedDocValues? _current;
        private string? _bottom;
        private string? _top;
        private readonly BytesRef _scratch = new();

        private string? Read(int doc)
        {
            if (_current is null)
            {
                return null;
            }
            var ord = _current.GetOrd(doc);
            if (ord < 0)
            {
                return null;
            }
            _current.LookupOrd(ord, _scratch);
            return _scratch.Utf8ToString();
        }

        public override int Compare(int slot1, int slot2) => Instance.Compare(_values[slot1], _values[slot2]);

        public override void SetBottom(int slot) => _bottom = _values[slot];

        public override void SetTopValue(string value) => _top = value;

        public override int CompareBottom(int doc) => Instance.Compare(_bottom, Read(doc));

        public override int CompareTop(int doc) => Instance.Compare(_top, Read(doc));

        public override void Copy(int slot, int doc) => _values[slot] = Read(doc);

        public override FieldComparer SetNextReader(AtomicReaderContext context)
        {
            _current = context.AtomicReader.GetSortedDocValues(field);
            return this;
        }

        public override string this[int slot] => _values[slot]!;
    }
}
