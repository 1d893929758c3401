using System.Text;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Tests.Documents;

public class DocumentIdsTests
{
    [Theory]
    [InlineData("users/1")]
    [InlineData("Users/1")]
    [InlineData("\u05de\u05e9\u05ea\u05de\u05e9\u05d9\u05dd/1")]
    [InlineData("\u7528\u6237/\ud83d\ude00")]
    [InlineData("orders/")]
    [InlineData("invoices|")]
    [InlineData("with space and \"quotes\" and \\")]
    public void ValidIdsPass(string id) => Assert.Null(DocumentIds.Validate(id));

    [Fact]
    public void EmptyIdIsRejected() => Assert.Contains("empty", DocumentIds.Validate(string.Empty), StringComparison.Ordinal);

    [Fact]
    public void TooLongIdIsRejected() => Assert.Contains("maximum", DocumentIds.Validate(new string('a', DocumentIds.MaxLength + 1)), StringComparison.Ordinal);

    [Fact]
    public void MaximumLengthIdIsAccepted() => Assert.Null(DocumentIds.Validate(new string('a', DocumentIds.MaxLength)));

    [Theory]
    [InlineData("a\u0000b", 1)]
    [InlineData("a\nb", 1)]
    [InlineData("ab\u001f", 2)]
    [InlineData("\u007f", 0)]
    public void ControlCharactersAreRejectedWithTheirPosition(string id, int position) =>
        Assert.Contains($"position {position}", DocumentIds.Validate(id), StringComparison.Ordinal);

    [Fact]
    public void UnpairedSurrogatesAreRejected()
    {
        // Not [InlineData]: test discovery would turn lone surrogates into U+FFFD.
        Assert.Contains("surrogate character at position 1", DocumentIds.Validate("a\ud800"), StringComparison.Ordinal);
        Assert.Contains("surrogate character at position 0", DocumentIds.Validate("\udc00a"), StringComparison.Ordinal);
        Assert.Contains("surrogate character at position 3", DocumentIds.Validate("\ud83d\ude00a\udc00"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("users/1", "users/1")]
    [InlineData("USERS/1", "users/1")]
    [InlineData("Caf\u00c9/\u00c5", "caf\u00e9/\u00e5")]
    [InlineData("\u0391\u0392\u0393", "\u03b1\u03b2\u03b3")]
    public void KeysAreInvariantLowerCaseUtf8(string id, string expected) =>
        Assert.Equal(Encoding.UTF8.GetBytes(expected), DocumentIds.GetKey(id));

    [Fact]
    public void IdsDifferingOnlyInCaseShareAKey() => Assert.Equal(DocumentIds.GetKey("Orders/ABC"), DocumentIds.GetKey("oRDERS/abc"));

    [Fact]
    public void KeyTooLongForTheDestinationIsReported()
    {
        Span<byte> small = stackalloc byte[4];
        Assert.Equal(-1, DocumentIds.GetKey("users/1", small));
        Assert.Equal(-1, DocumentIds.GetKey("\u00e9\u00e9\u00e9", small));
    }

    [Theory]
    [InlineData("users/1", DocumentIds.IdKind.Exact)]
    [InlineData("users/", DocumentIds.IdKind.ServerGenerated)]
    [InlineData("invoices|", DocumentIds.IdKind.Identity)]
    public void KindFollowsTheLastCharacter(string id, DocumentIds.IdKind kind) => Assert.Equal(kind, DocumentIds.KindOf(id));

    [Fact]
    public void ServerGeneratedIdsSortInEtagOrder()
    {
        var ids = new[] { 1L, 9L, 10L, 99L, 100L, 123456789L }.Select(e => DocumentIds.CompleteServerGenerated("users/", e)).ToList();
        Assert.Equal("users/0000000000000000001-A", ids[0]);
        Assert.Equal(ids.Order(StringComparer.Ordinal), ids);
    }

    [Fact]
    public void IdentityReplacesThePipe() => Assert.Equal("invoices/42", DocumentIds.CompleteIdentity("invoices|", 42));
}

public class ChangeVectorsTests
{
    [Fact]
    public void FormatAndParseRoundTrip()
    {
        var id = ChangeVectors.NewDatabaseId();
        Assert.Equal(22, id.Length);
        var vector = ChangeVectors.Format("A", 1234, id);
        Assert.True(ChangeVectors.TryParse(vector, out var etag, out var db));
        Assert.Equal(1234, etag);
        Assert.Equal(id, db.ToString());
    }

    [Theory]
    [InlineData("\"A:5-abc\"", 5)]
    [InlineData("W/\"A:7-abc\"", 7)]
    [InlineData(" A:9-abc ", 9)]
    public void HeaderFormsParse(string text, long expected)
    {
        Assert.True(ChangeVectors.TryParse(text, out var etag, out _));
        Assert.Equal(expected, etag);
    }

    [Theory]
    [InlineData("")]
    [InlineData("A:")]
    [InlineData("A:x-abc")]
    [InlineData("A:0-abc")]
    [InlineData("A:-1-abc")]
    [InlineData("A:5-")]
    [InlineData("A:99999999999999999999-abc")]
    public void MalformedVectorsDoNotParse(string text) => Assert.False(ChangeVectors.TryParse(text, out _, out _));

    [Theory]
    [InlineData("\"A:5-abc\"", true)]
    [InlineData("A:5-abc", true)]
    [InlineData("\"A:4-abc\", \"A:5-abc\"", true)]
    [InlineData("W/\"A:5-abc\"", true)]
    [InlineData("\"A:5-abd\"", false)]
    [InlineData("", false)]
    public void MatchesComparesEachListedValue(string header, bool expected) => Assert.Equal(expected, ChangeVectors.Matches(header, "A:5-abc"));

    [Fact]
    public void TimestampsHaveSevenFractionDigitsAndZ()
    {
        Span<byte> buffer = stackalloc byte[Timestamps.Length];
        var written = Timestamps.Format(new DateTime(2026, 11, 22, 14, 5, 9, DateTimeKind.Utc).AddTicks(1234567), buffer);
        Assert.Equal("2026-11-22T14:05:09.1234567Z", Encoding.UTF8.GetString(buffer[..written]));
    }
}
