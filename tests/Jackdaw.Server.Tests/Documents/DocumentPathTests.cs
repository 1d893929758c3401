using System.Globalization;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>The one walk over a document's paths, rule by rule (the leaf rules in <see cref="DocumentPath"/>'s comment).</summary>
public sealed class DocumentPathTests
{
    private static byte[] Blittable(string json, BlittableMode mode = BlittableMode.Disk)
    {
        using var context = new JsonOperationContext();
        return context.Parse(Encoding.UTF8.GetBytes(json), mode).ToArray();
    }

    /// <summary>Records a walk as text: leaves as <c>Kind:value</c>, arrays as <c>[</c> and <c>]</c>.</summary>
    private struct Recorder(List<string> events, int stopAfter = int.MaxValue) : IDocumentPathVisitor
    {
        public bool Leaf(PathLeaf leaf)
        {
            events.Add(leaf.Kind switch
            {
                PathLeafKind.Number => "Number:" + leaf.Number.ToString("R", CultureInfo.InvariantCulture),
                PathLeafKind.String => "String:" + leaf.GetString(),
                _ => leaf.Kind.ToString(),
            });
            return events.Count(e => e is not ("[" or "]")) < stopAfter;
        }

        public readonly void EnterArray() => events.Add("[");

        public readonly void LeaveArray() => events.Add("]");
    }

    private static string Walk(string json, string path, BlittableMode mode = BlittableMode.Disk) => Walk(Blittable(json, mode), path);

    private static string Walk(byte[] document, string path)
    {
        var events = new List<string>();
        var recorder = new Recorder(events);
        Assert.True(DocumentPath.Parse(path).Walk(document, ref recorder));
        return string.Join(" ", events);
    }

    [Theory]
    [InlineData("null", "Null")]
    [InlineData("true", "True")]
    [InlineData("false", "False")]
    [InlineData("42", "Number:42")]
    [InlineData("-7", "Number:-7")]
    [InlineData("1.5", "Number:1.5")]
    [InlineData("1.0", "Number:1")]
    [InlineData("1e3", "Number:1000")]
    [InlineData("-0", "Number:0")]
    [InlineData("-0.0", "Number:0")]
    [InlineData("9007199254740993", "Number:9007199254740992")]
    [InlineData("9223372036854775807", "Number:9.223372036854776E+18")]
    [InlineData("12345678901234567890", "Number:1.2345678901234567E+19")]
    [InlineData("\"MiXed\"", "String:MiXed")]
    [InlineData("\"\"", "String:")]
    [InlineData("{\"B\":1}", "Object")]
    [InlineData("{}", "Object")]
    public void AValueAtTheEndOfThePathIsALeafOfItsKind(string value, string expected) =>
        Assert.Equal(expected, Walk($"{{\"A\":{value}}}", "A"));

    [Fact]
    public void AMissingPropertyOrAScalarInTheMiddleReachesNothing()
    {
        Assert.Equal("", Walk("""{"A":1}""", "B"));
        Assert.Equal("", Walk("""{"A":1}""", "A.B"));
        Assert.Equal("", Walk("""{"A":null}""", "A.B"));
        Assert.Equal("", Walk("""{"A":"text"}""", "A.B"));
        Assert.Equal("", Walk("""{"A":{"C":1}}""", "A.B"));
        Assert.Equal("Number:1", Walk("""{"A":{"B":1}}""", "A.B"));
        Assert.Equal("Null", Walk("""{"A":{"B":null}}""", "A.B"));
    }

    [Fact]
    public void ArraysAreWalkedWhereverTheyAreMetMarkedOrNot()
    {
        const string Json = """{"A":[{"B":1},{"C":2},{"B":[3,[4,{"X":5}]]},7,null,[{"B":"s"}],[]]}""";
        // In the middle: each element walked on; elements that reach nothing leave only their brackets.
        Assert.Equal("[ Number:1 [ Number:3 [ Number:4 Object ] ] [ String:s ] [ ] ]", Walk(Json, "A.B"));
        Assert.Equal(Walk(Json, "A.B"), Walk(Json, "A[].B"));
        Assert.Equal(Walk(Json, "A.B"), Walk(Json, "A[].B[]"));
        // At the end: the elements are the leaves.
        Assert.Equal("[ Object Object Object Number:7 Null [ Object ] [ ] ]", Walk(Json, "A"));
        Assert.Equal("[ ]", Walk("""{"A":[]}""", "A"));
        Assert.Equal("[ [ [ Number:1 ] ] ]", Walk("""{"A":[[[1]]]}""", "A"));
    }

    [Fact]
    public void ANumberThatIsNotADoubleIsABadNumberAndInfinityIsANumber()
    {
        // Neither a NaN nor a number text that does not parse comes from JSON (nor from a patch, which
        // refuses NaN): only a document written by other means holds one, so a text is overwritten in place.
        foreach (var text in new[] { "NaN", "1x5", "1,5", "" })
        {
            var bad = Blittable("""{"A":1.5}""", BlittableMode.Memory);
            var at = bad.AsSpan().IndexOf("\u00031.5"u8);
            bad[at] = (byte)text.Length;
            Encoding.ASCII.GetBytes(text).CopyTo(bad.AsSpan(at + 1));
            Assert.Equal("BadNumber", Walk(bad, "A"));
        }

        // Memory mode keeps numbers too large for a double; they read as infinity.
        Assert.Equal("[ Number:Infinity Number:-Infinity ]", Walk("""{"A":[1e999,-1e999]}""", "A", BlittableMode.Memory));
    }

    [Fact]
    public void AVisitorStopsTheWalkByReturningFalse()
    {
        var events = new List<string>();
        var recorder = new Recorder(events, stopAfter: 2);
        Assert.False(DocumentPath.Parse("A").Walk(Blittable("""{"A":[1,[2,3],4]}"""), ref recorder));
        Assert.Equal("[ Number:1 [ Number:2", string.Join(" ", events));
    }

    [Fact]
    public void APathParsesAtEveryDotAndDropsArrayMarks()
    {
        Assert.Equal(["Lines", "Product"], DocumentPath.Parse("Lines[].Product").Names);
        Assert.Equal(["x y", "A"], DocumentPath.Parse("x y.A").Names);
        Assert.Equal(["a", "b"], DocumentPath.Parse("a.b").Names);
        Assert.Equal("Number:1", Walk("""{"a":{"b":1},"a.b":2}""", "a.b"));
        Assert.Throws<ArgumentException>(() => new DocumentPath());
    }

    [Fact]
    public void ArraysSharingTheirElementsStopTheWalkWithAFormatError()
    {
        // 2^40 leaves if walked naively, in a few hundred bytes: arrays whose two entries point at
        // the same inner array (only a corrupt document shares values).
        var document = FanOut(40);
        var events = new List<string>();
        var recorder = new Recorder(events);
        var error = Assert.Throws<BlittableFormatException>(() => DocumentPath.Parse("a").Walk(document, ref recorder));
        Assert.Contains("share values", error.Message, StringComparison.Ordinal);
        Assert.True(events.Count < 2 * document.Length, $"{events.Count} events before the walk stopped");
    }

    /// <summary>
    /// <c>{"a": A(levels)}</c> where A0 is an empty array and each A(k) holds two entries that both
    /// point at A(k-1), written by hand after the layout in storage/Blittable/Format/BlittableFormat.cs
    /// (as the storage tests' SharedValueTests.FanOut, whose helpers are internal to storage).
    /// </summary>
    private static byte[] FanOut(int levels)
    {
        const byte ArrayTag = 0x80, ObjectTag = 0x40, ArrayType = 9;
        var bytes = new List<byte>(new byte[16]);
        var below = bytes.Count;
        bytes.AddRange([ArrayTag, 0]);
        for (var level = 1; level <= levels; level++)
        {
            var at = bytes.Count;
            var back = (byte)(at - below);
            bytes.AddRange([ArrayTag, 2, back, ArrayType, back, ArrayType]);
            below = at;
        }
        var root = bytes.Count;
        bytes.AddRange([ObjectTag, 1, 0, (byte)(root - below), ArrayType, 0]);
        var names = bytes.Count;
        bytes.AddRange([2, (byte)'a']);
        var document = bytes.ToArray();
        // Header: magic, version 2, flags (Memory mode), reserved, total length, root, names.
        document[0] = 0xB7;
        document[1] = 2;
        BitConverter.TryWriteBytes(document.AsSpan(4), document.Length);
        BitConverter.TryWriteBytes(document.AsSpan(8), root);
        BitConverter.TryWriteBytes(document.AsSpan(12), names);
        return document;
    }
}
