package org.pycrawler.bridge;

import com.sleepycat.bind.tuple.TupleBinding;
import com.sleepycat.bind.tuple.TupleInput;
import com.sleepycat.bind.tuple.TupleOutput;
import java.sql.Timestamp;
import java.util.Date;

/**
 * The stored form of a {@link CrawlUrl}: JE tuple fields behind a leading format-version
 * byte, so records written before a field was added stay readable. pycrawler's Python codec
 * ({@code pycrawler.records.crawl_url}) writes and reads the same bytes.
 *
 * <p>Format version 1, in order (every number in JE's tuple encoding):
 * <pre>
 *   unsignedByte  version = 1
 *   String        oriUrl, url                 (writeString: JE UTF, 0-terminated; null = 0xFF)
 *   int           urlNo, statusCode, hitNum
 *   String        charSet, abstractText, author
 *   int           weight
 *   String        description
 *   int           fileSize
 *   boolean       lastUpdateTime present; if so: long getTime(), int getNanos()
 *   boolean       timeToLive present; if so: long getTime()
 *   String        title, type
 *   int           urlRefrences length, -1 for null; then that many Strings (each may be null)
 *   int           layer
 * </pre>
 *
 * <p>Evolution rule (both languages follow it): a new field is only ever appended, under a
 * new version number; fields are never removed or reordered (a retired field is still written,
 * with its default). A record of version {@code v} holds exactly the fields of versions up to
 * {@code v}; a reader reads those and leaves every later field at the value a fresh
 * {@code new CrawlUrl()} has (null, or 0). A version newer than the reader knows, or 0, is
 * refused with an exception rather than misread. Writers always write the current version.
 */
public class CrawlUrlBinding extends TupleBinding<CrawlUrl> {
    /** The format version this build writes, and the newest it reads. */
    public static final int CURRENT_VERSION = 1;

    @Override
    public CrawlUrl entryToObject(TupleInput in) {
        int version = in.readUnsignedByte();
        if (version < 1 || version > CURRENT_VERSION) {
            throw new IllegalArgumentException("CrawlUrl record has format version " + version
                    + "; this build reads versions 1 to " + CURRENT_VERSION);
        }
        CrawlUrl c = new CrawlUrl();
        c.setOriUrl(in.readString());
        c.setUrl(in.readString());
        c.setUrlNo(in.readInt());
        c.setStatusCode(in.readInt());
        c.setHitNum(in.readInt());
        c.setCharSet(in.readString());
        c.setAbstractText(in.readString());
        c.setAuthor(in.readString());
        c.setWeight(in.readInt());
        c.setDescription(in.readString());
        c.setFileSize(in.readInt());
        if (in.readBoolean()) {
            Timestamp t = new Timestamp(in.readLong());
            t.setNanos(in.readInt());
            c.setLastUpdateTime(t);
        }
        if (in.readBoolean()) {
            c.setTimeToLive(new Date(in.readLong()));
        }
        c.setTitle(in.readString());
        c.setType(in.readString());
        int references = in.readInt();
        if (references >= 0) {
            String[] refs = new String[references];
            for (int i = 0; i < references; i++) {
                refs[i] = in.readString();
            }
            c.setUrlRefrences(refs);
        }
        c.setLayer(in.readInt());
        // Fields of later versions go here, each read only when version >= its version.
        return c;
    }

    @Override
    public void objectToEntry(CrawlUrl c, TupleOutput out) {
        out.writeUnsignedByte(CURRENT_VERSION);
        out.writeString(c.getOriUrl());
        out.writeString(c.getUrl());
        out.writeInt(c.getUrlNo());
        out.writeInt(c.getStatusCode());
        out.writeInt(c.getHitNum());
        out.writeString(c.getCharSet());
        out.writeString(c.getAbstractText());
        out.writeString(c.getAuthor());
        out.writeInt(c.getWeight());
        out.writeString(c.getDescription());
        out.writeInt(c.getFileSize());
        Timestamp updated = c.getLastUpdateTime();
        out.writeBoolean(updated != null);
        if (updated != null) {
            out.writeLong(updated.getTime());
            out.writeInt(updated.getNanos());
        }
        Date expires = c.getTimeToLive();
        out.writeBoolean(expires != null);
        if (expires != null) {
            out.writeLong(expires.getTime());
        }
        out.writeString(c.getTitle());
        out.writeString(c.getType());
        String[] refs = c.getUrlRefrences();
        out.writeInt(refs == null ? -1 : refs.length);
        if (refs != null) {
            for (String ref : refs) {
                out.writeString(ref);
            }
        }
        out.writeInt(c.getLayer());
    }
}
