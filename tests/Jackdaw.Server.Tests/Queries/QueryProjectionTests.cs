using System.Buffers;
using System.Text;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Rql;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Queries;

/// <summary>What a <c>select</c> writes for a path through objects and arrays of every shape.</summary>
public sealed class QueryProjectionTests
{
    private const string Document = """
        {"A":{"B":1},"L":[{"P":"a"},{"Q":1},{"P":["x","y"]},5,[{"P":"n"}],[]],"M":[[1,2],[3]],"S":"s","N":null,"E":[],"F":-0.0,"@metadata":{"@id":"things/1"}}
        """;

    private static string Project(string path)
    {
        using var context = new JsonOperationContext();
        var document = context.Parse(Encoding.UTF8.GetBytes(Document), BlittableMode.Disk).ToArray();
        var output = new ArrayBufferWriter<byte>();
        QueryProjection.WriteResult(output, RqlParser.Parse($"from Things select {path} as v"), "things/1", document, null, null);
        var json = Encoding.UTF8.GetString(output.WrittenSpan);
        const string Suffix = ",\"@metadata\":{\"@id\":\"things/1\",\"@projection\":true}}";
        Assert.StartsWith("{\"v\":", json, StringComparison.Ordinal);
        Assert.EndsWith(Suffix, json, StringComparison.Ordinal);
        return json["{\"v\":".Length..^Suffix.Length];
    }

    [Theory]
    // A value at the end is written whole, objects and arrays too; numbers as the document writes them.
    [InlineData("A", """{"B":1}""")]
    [InlineData("A.B", "1")]
    [InlineData("L", """[{"P":"a"},{"Q":1},{"P":["x","y"]},5,[{"P":"n"}],[]]""")]
    [InlineData("M", "[[1,2],[3]]")]
    [InlineData("E", "[]")]
    [InlineData("N", "null")]
    [InlineData("F", "-0.0")]
    // A path through an array projects an array of what each element reaches, nested as the
    // arrays are; an element that reaches nothing is left out.
    [InlineData("L.P", """["a",["x","y"],["n"],[]]""")]
    [InlineData("L[].P", """["a",["x","y"],["n"],[]]""")]
    [InlineData("L.Q.Z", "[[],[]]")]
    [InlineData("E.P", "[]")]
    // Nothing reached: null.
    [InlineData("Missing", "null")]
    [InlineData("S.X", "null")]
    [InlineData("A.B.C", "null")]
    public void APathProjectsWhatItReachesKeepingTheArraysShape(string path, string expected) =>
        Assert.Equal(expected, Project(path));
}
